"""G3's raw figures as the run record keeps them (``g3_rows.<host/deployment>.figures``) and its bindings.

The charts (kvgate.report.g3_plots) and the evidence checklist (kvgate.report.restore_evidence)
read G3's numbers through these, never out of the formatted table cells.

>>> level("dram-only@c8"), level("ssd-tier@whole"), level("recompute"), level("candidate-volume-whole@c16")
('conc 8', 'whole machine', 'one prompt', 'whole machine conc 16')
"""

from __future__ import annotations

from collections.abc import Iterator

from kvgate.configuration.gate_profiles import G3Profile, VerdictBinding
from kvgate.record import G3Figures
from kvgate.report.model import RunView


def number(value: object) -> float | None:
    """A recorded figure as a float; None for a missing, non-numeric or boolean one."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def level(arm: str) -> str:
    """'dram-only@c8' → 'conc 8', 'ssd-tier@whole' → 'whole machine', 'recompute' → 'one prompt';
    an arm of every instance together (``-whole``, R3's volume arms) says so before its level."""
    name, _, at = arm.partition("@")
    where = "one prompt" if not at else "whole machine" if at == "whole" else f"conc {at.removeprefix('c')}"
    return f"whole machine {where}" if name.endswith("-whole") else where


def deployments(view: RunView) -> Iterator[tuple[str, G3Figures]]:
    """(host/deployment, its figures) for every deployment that recorded its arms' summaries."""
    for key, figs in view.g3_figures().items():
        if isinstance(figs, G3Figures) and figs.arms:
            yield key, figs


def bindings(view: RunView) -> tuple[VerdictBinding, ...]:
    """The gate profile's reference bindings as the run recorded them (none from an older kvgate's)."""
    found = view.record.configuration.gate_profile
    return found.verdicts if isinstance(found, G3Profile) else ()


def suffixes(binding: VerdictBinding) -> list[str]:
    """The arm-name suffixes of a binding's levels (kvgate.orchestration.g3.load_arms.level_key)."""
    if binding.concurrency == "whole-machine":
        return ["@whole"]
    if binding.concurrency == "engine":
        return [""]
    return [f"@c{c}" for c in binding.levels]
