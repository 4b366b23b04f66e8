"""A check's Inputs (the measurements it was judged on) to and from the run record's JSON.

>>> from kvgate.base.criteria import Inputs, Measurement
>>> i = Inputs({"bw": Measurement("seq.bw", 5.0, "B/s", ("artifacts/h/fio.json",))}, detail="slow")
>>> inputs_from_record(inputs_to_record(i)) == i
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvgate.base.criteria import Inputs, Measurement


def measurements_to_record(
    measured: Mapping[str, Measurement], *, evidence: bool = True
) -> dict[str, dict[str, Any]]:
    """Measurements by key as the record keeps them; a gate's table data leaves out the
    ``evidence`` paths (kept with the check's inputs and the gate's artifacts)."""
    out: dict[str, dict[str, Any]] = {}
    for key, m in measured.items():
        out[key] = {"metric": m.metric, "value": m.value, "unit": m.unit, "invalid_reason": m.invalid_reason}
        if evidence:
            out[key]["evidence"] = list(m.evidence)
    return out


def measurements_from_record(data: Mapping[str, dict[str, Any]]) -> dict[str, Measurement]:
    """The inverse of :func:`measurements_to_record`."""
    return {
        key: Measurement(
            m["metric"], m["value"], m["unit"], tuple(m.get("evidence") or ()), m["invalid_reason"]
        )
        for key, m in data.items()
    }


def inputs_to_record(inputs: Inputs) -> dict[str, Any]:
    return {
        "measured": measurements_to_record(inputs.measured),
        "detail": inputs.detail,
        "said": list(inputs.said),
        "blocked": inputs.blocked,
    }


def inputs_from_record(data: dict[str, Any]) -> Inputs:
    """The inverse of :func:`inputs_to_record` (the data was validated by ``JudgementRecord``)."""
    measured = measurements_from_record(data["measured"])
    return Inputs(measured, detail=data["detail"], said=tuple(data["said"]), blocked=data["blocked"])
