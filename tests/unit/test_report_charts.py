"""Charts are matplotlib's, reduced to the allow-list: shapes and text, nothing that fetches or runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_report_g3_charts import g3_configuration

from kvgate.base.criteria import Verdict
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore
from kvgate.report.charts import figure, to_svg
from kvgate.report.model import load_run
from kvgate.report.plots import charts
from kvgate.report.svg import sanitize


def test_a_matplotlib_figure_passes_the_allow_list_unchanged() -> None:
    with figure() as (fig, ax):
        ax.plot([1, 2, 4], [1.0, 3.0, 2.0], label="bs 1m")
        ax.axhspan(1.5, 2.5, alpha=0.2)
        ax.set_xlabel("I/Os in flight")
        ax.set_ylabel("GB/s")
        ax.legend()
        svg = to_svg(fig)
    assert sanitize(svg) == svg
    assert not re.search(r"<(style|script|use|image|foreignObject|metadata)\b|style=|href|url\(", svg)
    assert ">I/Os in flight</text>" in svg  # axis titles stay text, readable and searchable
    assert ">GB/s</text>" in svg


def run_with(root: Path, meta: dict[str, object], *records: JudgementRecord) -> Path:
    meta = {"planned": [], "configuration": g3_configuration(), **meta}
    store = RunStore.create(root, site="lab-a", gate="g3", meta=meta)
    for rec in records:
        store.record(rec)
    store.finish("complete")
    return store.path


def test_reference_figures_are_drawn_against_their_range_with_axis_titles(tmp_path: Path) -> None:
    rec = JudgementRecord(
        id="h/engine[tiny].ttft-p50-reduction",
        host="h",
        check="engine[tiny].ttft-p50-reduction",
        verdict=Verdict.PASS,
        condition="ok",
        rule="R2-ttft-p50-tp8",
        metric="ttft_p50_reduction_pct",
        measured=41.0,
        expected=25.5,
        comparator=">=",
        unit="%",
    )
    (chart,) = charts(load_run(run_with(tmp_path, {}, rec)))
    assert chart.title == "Figures against their references"
    assert "improvement over the baseline arm" in chart.svg
    assert "h/tiny R2 (% reduction)" in chart.svg  # the deployment that produced it (a reader could not tell)
    assert "drawn at the one its check judged, the least improvement" in chart.caption


def test_g2_sweep_is_drawn_with_its_knee_and_no_chart_without_data(tmp_path: Path) -> None:
    sweep = [["1m", 1, 7.7e8], ["1m", 8, 1.5e9], ["4m", 1, 1.2e9], ["4m", 8, 2.4e9]]
    knee = {"numjobs": 1, "iodepth": 8, "bw_bytes_per_s": 2.4e9, "bs": "4m", "parallelism": 8}
    row = {
        "measurements": {},
        "knee": knee | {"saturated": True, "gain": 1.0},
        "ceiling": None,
        "sweep": sweep,
    }
    (chart,) = charts(load_run(run_with(tmp_path, {"g2_rows": {"h/v": row}})))
    assert "read bandwidth (GB/s)" in chart.svg
    assert "knee (4m)" in chart.svg
    assert charts(load_run(run_with(tmp_path / "empty", {}))) == ()


def test_a_soak_is_drawn_over_time_from_its_stored_windows(tmp_path: Path) -> None:
    run = run_with(tmp_path, {})
    path = run / "artifacts" / "h" / "g4" / "tiny" / "windows.jsonl"
    path.parent.mkdir(parents=True)
    summary = {"p50_ttft_ms": 100.0, "p99_ttft_ms": 300.0, "output_throughput_tok_per_s": 160.0}
    lines = [f'{{"end_unix_s": {600 * i}, "summary": {json.dumps(summary)}}}' for i in range(6)]
    path.write_text("\n".join([*lines, '{"torn']) + "\n")
    (chart,) = charts(load_run(run))
    assert chart.title == "Soak over time — h/tiny"
    assert "minutes since the soak started" in chart.svg
    assert "TTFT (s)" in chart.svg


def test_g2s_kv_restore_is_drawn_one_reader_vs_parallel_with_the_ceiling(tmp_path: Path) -> None:
    def rec(check: str, metric: str, value: float, verdict: Verdict = Verdict.PASS) -> JudgementRecord:
        return JudgementRecord(
            id=f"h/{check}",
            host="h",
            check=check,
            verdict=verdict,
            condition="ok",
            metric=metric,
            measured=value,
            unit="B/s",
        )

    # the ceiling is a figure of G2's record, not a check (no check holds it: a reader found the caption's
    # red line missing from every demo chart while a test passed on a ceiling check G2 never writes)
    ceiling = {"metric": "ceiling.read_bw_bytes_per_s", "value": 3.4e9, "unit": "bytes/s"}
    row = {"measurements": {ceiling["metric"]: ceiling}, "knee": None, "ceiling": None, "sweep": []}
    run = run_with(
        tmp_path,
        {"g2_rows": {"h/v": row}},
        rec("volume[v].kv_restore.serial.bw", "kv_restore.serial.read_bw_bytes_per_s", 0.6e9),
        rec("volume[v].kv_restore.parallel.bw", "kv_restore.parallel.read_bw_bytes_per_s", 3.1e9),
        rec("volume[w].kv_restore.serial.bw", "kv_restore.serial.read_bw_bytes_per_s", 1e9, Verdict.INVALID),
        rec("volume[w].kv_restore.parallel.bw", "kv_restore.parallel.read_bw_bytes_per_s", 2e9),
    )
    (chart,) = [c for c in charts(load_run(run)) if c.title.startswith("KV restore")]
    assert chart.title == "KV restore: one reader vs parallel readers — h/volume[v]"  # w's serial untrusted
    assert ">KV restore, 1 reader per request</text>" in chart.svg
    assert ">read bandwidth (GB/s)</text>" in chart.svg
    assert 'stroke="#c62828"' in chart.svg  # the ceiling
