"""What the history keeps of one run: its identity and its numeric figures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# A figure's change within this much of its value is noise when its repeats recorded no CV.
DEFAULT_NOISE = 0.10


@dataclass(frozen=True)
class RunFigure:
    """One numeric measurement of a run, e.g. 'localhost/volume[scratch].fio.seqread-1m.bw'."""

    id: str
    value: float
    unit: str = ""
    better: str = ""  # "higher" | "lower" | "" (no direction: a change is reported, never a regression)
    noise: float | None = None  # the repeats' coefficient of variation, when they recorded one


@dataclass(frozen=True)
class HistoryEntry:
    """One run as indexed: where, what, which configuration, the verdict and the figures."""

    run_id: str  # "<site>/<run directory>", unique under a results root (run_id_of)
    site: str
    gate: str
    inventory_sha256: str
    kvgate_version: str
    verdict: str
    started_at: str
    status: str
    figures: tuple[RunFigure, ...] = ()


def run_id_of(run_dir: Path) -> str:
    """'<site>/<run directory>': where the run lies under its results root, its key in the history."""
    resolved = run_dir.resolve()
    return f"{resolved.parent.name}/{resolved.name}"


def not_comparable(a: HistoryEntry, b: HistoryEntry) -> str:
    """Why two runs' figures say nothing of each other ("" when they do): another gate, site or inventory."""
    for field, what in (("gate", "gate"), ("site", "site"), ("inventory_sha256", "inventory (sha256)")):
        if (va := getattr(a, field)) != (vb := getattr(b, field)):
            return f"{a.run_id} and {b.run_id} are not comparable: another {what} ({va[:16]!r}, {vb[:16]!r})"
    return ""
