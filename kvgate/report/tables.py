"""What every gate's report tables share: a table section, the stored rows in order, verdict cells.

A gate keeps numbers in run.json (``<gate>_rows.<host/subject>``); its table module
(``g2_tables``, ``g3_tables``, ``g4_tables``) turns them into cells here, at render time.

>>> table("T", ["a"], [["1"]], "n").data
{'columns': ['a'], 'rows': [['1']], 'note': 'n'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from kvgate.base.criteria import fmt
from kvgate.record import Section, VerdictRow

Cells = list[list[str]]
Row = TypeVar("Row")


def table(title: str, columns: list[str], rows: Cells, note: str) -> Section:
    """A ``table.html`` section as the report lays it out."""
    return Section(
        title=title, template="sections/table.html", data={"columns": columns, "rows": rows, "note": note}
    )


def in_order(stored: Mapping[str, Row]) -> list[tuple[str, Row]]:
    """The stored host/subjects in the report's order: by key."""
    return [(k, stored[k]) for k in sorted(stored)]


def measured_cell(verdict: VerdictRow) -> str:
    """A verdict row's measured value with its unit (kvgate.orchestration.verdict_rows)."""
    value = verdict.measured
    return "—" if value is None else f"{fmt(value)} {verdict.unit}".strip()


def limit_cell(verdict: VerdictRow) -> str:
    """A verdict row's criterion: ``<= 0 responses``."""
    return f"{verdict.comparator} {fmt(verdict.expected)} {verdict.expected_unit}".strip()
