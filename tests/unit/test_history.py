"""Run history: every rendered run indexed; a regression is a move beyond the repeats' noise."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kvgate.base.criteria import Verdict
from kvgate.cli.command_line import main
from kvgate.record import JudgementRecord, write_manifest
from kvgate.record.store import RunStore
from kvgate.report import render
from kvgate.report.comparison import frame
from kvgate.report.history import History, HistoryEntry, compare_figures, regressions
from kvgate.report.history.entry import RunFigure

BW = "seqread-1m.read_bw_bytes_per_s"


def record(
    run_id: str, *figures: RunFigure, sha: str = "ab", started: str = "2026-01-01T00:00:00Z"
) -> HistoryEntry:
    return HistoryEntry(run_id, "lab-a", "g2", sha, "0.1.0", "PASS", started, "complete", figures)


def test_a_drop_beyond_twice_the_cv_is_a_regression_and_within_it_is_noise() -> None:
    a = record(
        "a", RunFigure("h/bw", 2.0e9, "B/s", "higher", 0.05), RunFigure("h/p99", 1e6, "ns", "lower", 0.05)
    )
    b = record(
        "b", RunFigure("h/bw", 1.85e9, "B/s", "higher", 0.05), RunFigure("h/p99", 1.5e6, "ns", "lower", 0.05)
    )
    diff = compare_figures(frame(a), frame(b)).set_index("figure")
    assert diff.loc["h/bw", "status"] == "within noise"  # -7.5 % with a 5 % CV
    assert diff.loc["h/p99", "status"] == "regression"  # latency up 50 %
    assert list(regressions(compare_figures(frame(a), frame(b)))["figure"]) == ["h/p99"]


def test_an_improvement_and_a_figure_without_direction_are_not_regressions() -> None:
    a = record("a", RunFigure("h/bw", 1e9, "B/s", "higher"), RunFigure("h/n", 10, "", ""))
    b = record(
        "b",
        RunFigure("h/bw", 2e9, "B/s", "higher"),
        RunFigure("h/n", 20, "", ""),
        RunFigure("h/x", 1, "", ""),
    )
    status = dict(compare_figures(frame(a), frame(b))[["figure", "status"]].itertuples(index=False))
    assert status == {"h/bw": "improvement", "h/n": "changed", "h/x": "new"}


def test_previous_is_the_last_complete_run_of_the_same_site_gate_and_inventory(tmp_path: Path) -> None:
    h = History(tmp_path)
    h.index(record("old", started="2026-01-01T00:00:00Z"))
    h.index(record("other-inventory", sha="cd", started="2026-01-02T00:00:00Z"))
    h.index(record("now", started="2026-01-03T00:00:00Z"))
    assert h.previous(record("now", started="2026-01-03T00:00:00Z")) == "old"
    assert list(h.runs(gate="g2")["run_id"]) == ["old", "other-inventory", "now"]


def g2_run(root: Path, bw: float, cv: float, *, counters: float | None = None) -> Path:
    """A stored G2 run: a bandwidth and its CV; ``counters``: a volume's counter proof beside them."""
    meta = {"inventory": {"path": "inventory/lab-a.yaml", "sha256": "ab" * 32}, "planned": []}
    store = RunStore.create(root, site="lab-a", gate="g2", meta=meta)
    measured = [(BW, bw, ">=", 1e8, "B/s"), (f"{BW}_cv", cv, "<=", 0.5, "")]
    if counters is not None:
        measured.append(("counters_moved_ratio", counters, ">=", 0.9, "x"))
    for metric, value, comparator, expected, unit in measured:
        store.record(
            JudgementRecord(
                id=f"h/{metric}",
                host="h",
                check=metric,
                verdict=Verdict.PASS,
                condition="ok",
                rule="G2-FIO-1",
                metric=metric,
                measured=value,
                expected=expected,
                comparator=comparator,
                unit=unit,
            )
        )
    store.finish("complete")
    return store.path


def test_the_second_report_compares_with_the_first_and_names_the_regression(tmp_path: Path) -> None:
    first = render(g2_run(tmp_path, 2.0e9, 0.02), pdf=False)
    assert first.regressions == ()
    assert "No earlier complete run" in first.html.read_text()
    second = render(g2_run(tmp_path, 1.5e9, 0.02), pdf=False)
    assert second.regressions == (f"h/{BW}",)
    html = second.html.read_text()
    assert "1 figure regressed" in html
    assert "2 GB/s" in html
    assert "1.5 GB/s" in html
    assert render(g2_run(tmp_path, 1.49e9, 0.02), pdf=False).regressions == ()  # -0.7 %: within noise


def test_history_and_compare_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = g2_run(tmp_path, 2.0e9, 0.02), g2_run(tmp_path, 1.0e9, 0.02)
    for run in (a, b):
        write_manifest(run)  # as every gate run ends: compare reads only sealed runs
        render(run, pdf=False)
    assert main(["history", "--results", str(tmp_path), "--gate", "g2"]) == 0
    assert "2 indexed run(s)" in capsys.readouterr().out
    assert main(["compare", str(a), str(b)]) == 6  # a regression
    out = capsys.readouterr().out
    assert "regression" in out
    assert "-50 %" in out


def test_a_proof_that_moves_within_its_bound_is_no_regression(tmp_path: Path) -> None:
    """The volume's counters moved 1.44× its reads while another process read the same disk, then
    1×: both prove the counters count the volume; neither run's storage got worse (before: a
    "regression", exit 6 on a nightly run that had slowed down nothing)."""
    render(g2_run(tmp_path, 2.0e9, 0.02, counters=1.44), pdf=False)
    second = render(g2_run(tmp_path, 2.0e9, 0.02, counters=1.0), pdf=False)
    assert second.regressions == ()
    assert "No figure regressed" in second.html.read_text()


def test_junit_says_which_run_it_was_compared_with_when_nothing_regressed(tmp_path: Path) -> None:
    render(g2_run(tmp_path, 2.0e9, 0.02), pdf=False)
    junit = render(g2_run(tmp_path, 2.0e9, 0.02), pdf=False).junit
    suites = {s.get("name"): s for s in ET.parse(junit).getroot().iter("testsuite")}
    trend = suites["g2 trend"]
    assert trend.get("failures") == "0"
    (case,) = trend.iter("testcase")
    assert case.get("name", "").startswith("no regression against lab-a/g2-")
    assert not list(case)  # a pass
