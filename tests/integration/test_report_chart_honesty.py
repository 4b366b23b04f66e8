"""Every chart of every stored run, read as drawn: nothing on it can mislead.

The charts are drawn for real (matplotlib, then the report's allow-list); each figure is
inspected just before it becomes SVG: bars only on a linear axis that starts at zero,
every limit line (the report's red) named in a legend or beside it on the chart, and a
comparison the verdicts did not judge marked so on the chart itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle
from report_runs import build

from kvgate.report import g3_plots, load_run, plots, soak_plots
from kvgate.report.charts import NOT_JUDGED, THRESHOLD, to_svg

RUNS = [("g3", "complete"), ("g3", "limited"), ("g4", "complete")]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], list[Any]]:
    """Each run's figures, read just before each becomes SVG (and is closed)."""
    figures: list[Any] = []

    def keep(fig: Any) -> str:
        figures.append(Figure(fig))
        return to_svg(fig)

    root = tmp_path_factory.mktemp("charts")
    out: dict[tuple[str, str], list[Any]] = {}
    with pytest.MonkeyPatch.context() as mp:
        for module in (plots, g3_plots, soak_plots):
            mp.setattr(module, "to_svg", keep)
        for gate, outcome in RUNS:
            start = len(figures)
            plots.charts(load_run(build(root, gate, outcome=outcome)))
            out[gate, outcome] = figures[start:]
    return out


class Figure:
    """What a reader sees of one figure: per axes its scale, bars, red lines and every text."""

    def __init__(self, fig: Any) -> None:
        self.axes = [Axes(ax) for ax in fig.axes]
        legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
        self.legend = {t.get_text() for lg in legends for t in lg.get_texts()}
        self.texts = self.legend | {t for a in self.axes for t in a.texts}


class Axes:
    def __init__(self, ax: Any) -> None:
        self.log = ax.get_xscale() == "log"
        self.bars = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_height() < 1]  # not a span
        self.x_from = ax.get_xlim()[0]
        self.red = [a.get_label() for a in [*ax.lines, *ax.collections] if red(a)]
        self.texts = {t.get_text().strip() for t in ax.texts} | {t.get_text() for t in ax.get_yticklabels()}


def red(artist: Any) -> bool:
    colors = artist.get_color() if hasattr(artist, "get_color") else artist.get_edgecolor()
    found = [colors] if isinstance(colors, str) else list(colors)
    return any(to_hex(c) == THRESHOLD for c in found)


def every_figure(drawn: dict[tuple[str, str], list[Figure]]) -> Iterator[tuple[str, Figure]]:
    for (gate, outcome), figures in drawn.items():
        for i, fig in enumerate(figures):
            yield f"{gate}/{outcome} chart {i}", fig


def test_the_stored_runs_draw_the_charts_under_test(drawn: dict) -> None:
    assert all(drawn[r] for r in RUNS)  # a test over no chart would prove nothing


def test_bars_stand_on_a_linear_axis_from_zero(drawn: dict) -> None:
    """The planner drew bars on a log axis from an arbitrary floor: a bar's length meant nothing."""
    wrong = [
        where
        for where, fig in every_figure(drawn)
        for ax in fig.axes
        if ax.bars and (ax.log or ax.x_from > 0)
    ]
    assert wrong == []


def test_every_limit_line_says_what_it_limits(drawn: dict) -> None:
    """A red line (threshold, ceiling, limit slope) without a name in the legend is a guess for the reader."""
    unnamed = [
        f"{where}: {label!r}"
        for where, fig in every_figure(drawn)
        for ax in fig.axes
        for label in ax.red
        if label.startswith("_") or label not in fig.legend
    ]
    assert unnamed == []


def test_a_comparison_not_judged_is_marked_on_the_chart(drawn: dict) -> None:
    """G3 judging one reference drew R2/R3's throughput bands as if they had been judged."""
    marks = [t for fig in drawn["g3", "limited"] for ax in fig.axes for t in ax.texts if NOT_JUDGED in t]
    assert marks, "the SKIP throughput comparison is drawn without a 'not judged' mark"
    judged = [t for fig in drawn["g3", "complete"] for ax in fig.axes for t in ax.texts if NOT_JUDGED in t]
    assert judged == []  # nothing marked where the verdicts judged


def test_the_soak_says_which_ttft_line_the_limit_is_for(drawn: dict) -> None:
    """A p99 line under a limit started from it, with no legend: which percentile was judged?"""
    (soak,) = drawn["g4", "complete"]
    assert {"TTFT p50", "TTFT p99 (its drift is fitted)"} <= soak.legend


def test_chart_text_names_nothing_by_a_bare_red_line(tmp_path: Path) -> None:
    """The G3 reference chart: its red tick is the site threshold, said in its legend."""
    run = build(tmp_path, "g3")
    (chart,) = [c for c in plots.charts(load_run(run)) if c.title == "Figures against their references"]
    assert "site threshold (the floor of the improvement)" in chart.svg
