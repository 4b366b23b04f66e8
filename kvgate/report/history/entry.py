"""What the history keeps of one run: its identity and its numeric figures."""

from __future__ import annotations

from dataclasses import dataclass

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

    run_id: str  # "<site>/<run directory>", unique under a results root
    site: str
    gate: str
    inventory_sha256: str
    kvgate_version: str
    verdict: str
    started_at: str
    status: str
    figures: tuple[RunFigure, ...] = ()
