"""A check's verdict as G3 and G4 keep it for their report's verdict tables: numbers, not cells.

The verdict is the one the gate's measurement gave, before waivers (the checks table
shows waivers). kvgate.report.tables lays the row out when the report is rendered.

>>> from kvgate.base.criteria import Criterion, Inputs, Measurement
>>> from kvgate.judgement import Check
>>> c = Check(host="h", check="soak.alive", criterion=Criterion("G4-1", "up", ">=", 1), spec=None, key="up")
>>> verdict_row(c, c.evaluate(Inputs({"up": Measurement("up", 1, "engines")})))["measured"]
1
"""

from __future__ import annotations

from typing import Any

from kvgate.base.criteria import Judgement
from kvgate.judgement import Check


def verdict_row(check: Check[Any], judged: Judgement) -> dict[str, Any]:
    """What a verdict table shows of one judgement, with the reference the check is bound to."""
    m, c = judged.measurement, check.criterion
    row: dict[str, Any] = {
        "check": check.check,
        "measured": None if m is None else m.value,
        "unit": "" if m is None else m.unit,
        "comparator": c.comparator,
        "expected": c.expected,
        "expected_unit": c.unit,
        "source": c.source,
        "verdict": judged.verdict.value,
    }
    if check.bound is not None:
        ref = check.bound.reference
        row["reference"] = {"id": ref.id, "improvement": ref.improvement.model_dump(mode="json")}
    return row
