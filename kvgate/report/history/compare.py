"""Two runs' figures side by side: the change, the noise the repeats showed, and what it means.

A figure regresses when it moved in its worse direction by more than twice its noise
(the larger CV of the two runs, or DEFAULT_NOISE when neither recorded one). Any
smaller move is "within noise"; a figure without a better direction is only "changed".

>>> import pandas as pd
>>> a = pd.DataFrame({"figure": ["bw"], "value": [2e9], "unit": ["B/s"], "better": ["higher"]})
>>> a["noise"] = 0.02
>>> b = a.assign(value=[1.5e9])
>>> compare_figures(a, b)[["figure", "change", "status"]].to_dict("records")
[{'figure': 'bw', 'change': -0.25, 'status': 'regression'}]
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pandas as pd

from kvgate.report.history.entry import DEFAULT_NOISE

NOISE_FACTOR = 2.0  # beyond two CVs a move is not the repeats' scatter


def compare_figures(older: pd.DataFrame, newer: pd.DataFrame) -> pd.DataFrame:
    """Outer join on the figure: value_a, value_b, change (fraction), noise, status."""
    both = older.merge(newer, on="figure", how="outer", suffixes=("_a", "_b"))
    both["unit"] = both["unit_b"].fillna(both["unit_a"])
    both["better"] = both["better_b"].fillna(both["better_a"]).fillna("")
    both["noise"] = both[["noise_a", "noise_b"]].max(axis=1).fillna(DEFAULT_NOISE)
    base = both["value_a"].where(both["value_a"] != 0)
    both["change"] = (both["value_b"] - both["value_a"]) / base.abs()
    both["status"] = [status(row) for row in both.to_dict("records")]
    columns = ["figure", "unit", "value_a", "value_b", "change", "noise", "better", "status"]
    return both[columns].sort_values("figure", ignore_index=True)


def status(row: dict[Hashable, Any]) -> str:
    """One figure's verdict on the change (see the module docstring)."""
    a, b, change = row["value_a"], row["value_b"], row["change"]
    if pd.isna(a) or pd.isna(b) or a == b:
        return "new" if pd.isna(a) else "gone" if pd.isna(b) else "same"
    if pd.isna(change):
        return "changed"
    worse = {"higher": change < 0, "lower": change > 0}.get(str(row["better"]))
    if abs(change) <= NOISE_FACTOR * float(row["noise"]):
        return "within noise"
    if worse is None:
        return "changed"
    return "regression" if worse else "improvement"


def regressions(diff: pd.DataFrame) -> pd.DataFrame:
    return diff[diff["status"] == "regression"]
