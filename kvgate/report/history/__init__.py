"""Run history for nightly CI: every rendered run indexed in SQLite, compared with the last comparable one.

The store is ``<results root>/history.sqlite`` (kept between CI jobs with the results).
A run is indexed when its report is rendered: site, gate, inventory fingerprint, kvgate
version, verdict and every numeric figure with its unit, better direction and the
noise its repeats showed (CV). ``compare_figures`` joins two runs' figures and flags a
regression only when a figure moved the wrong way by more than that noise.

    entry.py    HistoryEntry: what the history keeps of one run, its identity and numeric Figures;
                which runs are comparable (same gate, site and inventory)
    store.py    History: the SQLite file under the results root, written as each run is rendered,
                checked when read (never through a link, never in a run directory)
    compare.py  two runs' figures side by side: the change, the repeats' noise, regression or not

Usage::

    history = History(Path("results"))
    history.index(view.history_entry())
    diff = compare_figures(history.figures(older), history.figures(newer))
    regressions(diff)
"""

from __future__ import annotations

from kvgate.report.history.compare import compare_figures, regressions
from kvgate.report.history.entry import HistoryEntry, not_comparable, run_id_of
from kvgate.report.history.store import History

__all__ = [
    "History",
    "HistoryEntry",
    "compare_figures",
    "not_comparable",
    "regressions",
    "run_id_of",
]
