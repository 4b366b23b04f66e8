"""The report's comparison with the previous comparable run (report.history), as table rows for people."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from kvgate.report.history import History, HistoryEntry, compare_figures, regressions
from kvgate.report.indexing import sync
from kvgate.report.numbers import human, significant

ORDER = {"regression": 0, "improvement": 1, "changed": 2, "new": 3, "gone": 4, "within noise": 5, "same": 6}


@dataclass(frozen=True)
class Comparison:
    previous: str  # run id of the previous comparable run; "" when there is none
    rows: tuple[tuple[str, str, str, str, str, str], ...]  # figure, previous, this, change, noise, status
    unchanged: int  # figures within their noise or identical
    regressions: tuple[str, ...]
    notes: tuple[str, ...] = ()  # what keeping the history in step with the run directories did or refused


NONE = Comparison("", (), 0, ())


def frame(run: HistoryEntry) -> pd.DataFrame:
    rows = [(f.id, f.value, f.unit, f.better, f.noise) for f in run.figures]
    return pd.DataFrame(rows, columns=["figure", "value", "unit", "better", "noise"])


def with_previous(root: Path, run: HistoryEntry) -> Comparison:
    """Compare ``run`` with the last complete comparable run under ``root``, or NONE.

    The history is first brought in step with the run directories (kvgate.report.indexing): a
    row whose run directory is gone is dropped, never compared with.
    """
    history = History(root)
    # only what changes this comparison: a dropped run of this gate at this site (a reader met another
    # gate's dropped row in a customer report); a run not indexed is `kvgate history`'s to say
    mine = f"history row {run.site}/{run.gate}-"
    notes = tuple(n for n in sync(history) if n.startswith(mine))
    previous = history.previous(run)
    if previous is None:
        return Comparison("", (), 0, (), notes)
    diff = compare_figures(history.figures(previous), frame(run))
    diff = diff.assign(order=diff["status"].map(ORDER)).sort_values(["order", "figure"])
    shown = diff[diff["order"] < ORDER["within noise"]]
    return Comparison(
        previous=previous,
        rows=tuple(row(r) for r in shown.to_dict("records")),
        unchanged=len(diff) - len(shown),
        regressions=tuple(regressions(diff)["figure"]),
        notes=notes,
    )


def row(r: dict[Hashable, Any]) -> tuple[str, str, str, str, str, str]:
    unit = str(r["unit"] or "")
    a, b, change = r["value_a"], r["value_b"], r["change"]
    shown_change = "—" if pd.isna(change) else f"{'+' if change >= 0 else ''}{significant(change * 100, 2)} %"
    noise = f"±{significant(2 * float(r['noise']) * 100, 2)} %"
    return (
        str(r["figure"]),
        "—" if pd.isna(a) else human(float(a), unit),
        "—" if pd.isna(b) else human(float(b), unit),
        shown_change,
        noise,
        str(r["status"]),
    )
