"""Contradictions a gate recorded are boxed on page 1 with their numbers, not buried in a table."""

from __future__ import annotations

from pathlib import Path

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_matrix import Knee, SweepPoint
from kvgate.orchestration.g2.ceiling import BEST, CEILING, contradictions, raise_ceiling
from kvgate.record import ArmFigures, G2Row
from kvgate.record.gate_rows import MeasurementRecord
from kvgate.record.store import RunStore
from kvgate.report.charts import Chart
from kvgate.report.g2_tables import fio_cells
from kvgate.report.g3_plots import repeats_sd, ttft_chart
from kvgate.report.html import render_html
from kvgate.report.model import load_run

KV = "kv_restore.parallel.read_bw_bytes_per_s"


def stored_g2(root: Path, found: dict[str, list[dict[str, object]]]) -> Path:
    store = RunStore.create(root, site="lab-a", gate="g2", meta={"planned": [], "contradictions": found})
    store.finish("complete")
    return store.path


def demo_measurements() -> dict[str, Measurement]:
    """The demo's G2 figures: KV restore 3.87 GB/s against a fio ceiling of 2.26 GB/s (best read 2.4)."""
    return {k: Measurement(k, v, "B/s") for k, v in ((CEILING, 2.26e9), (BEST, 2.4e9), (KV, 3.87e9))}


def demo_contradictions() -> list[dict[str, object]]:
    """What G2 finds in the demo's figures (KV restore 3.87 GB/s, ceiling 2.26, knee on the last point)."""
    ms = demo_measurements()
    knee = Knee(16, 2, 8, 2.2e9, False, 0.05, "8m")
    found = contradictions("localhost/scratch", ms, knee=knee, points=[SweepPoint(2, 8, 2.2e9, "8m")])
    return [c.model_dump() for c in found]


def page_one(html: str) -> str:
    cover = html.split('<header class="cover">', 1)[1]
    return cover.split('<p class="integrity', 1)[0]  # before the run record's integrity line


def test_page_one_boxes_each_contradiction_with_both_numbers_and_what_it_means(tmp_path: Path) -> None:
    view = load_run(stored_g2(tmp_path, {"localhost/scratch": demo_contradictions()}))
    assert len(view.contradictions) == 2  # read back typed from run.json
    cover = page_one(render_html(view, rendered_at="now"))
    assert "2 contradictions or anomalies among this run’s own figures" in cover
    kv, ceiling = "KV restore, parallel readers 3.87 GB/s", "read ceiling (best read) 2.4 GB/s"
    assert f"<strong>{kv}</strong> against <strong>{ceiling}</strong>" in cover
    assert "<strong>knee (bs 8m) 16 I/Os in flight</strong> against" in cover
    assert "the sweep did not find the knee" in cover


def test_a_run_without_contradictions_has_no_box(tmp_path: Path) -> None:
    cover = page_one(render_html(load_run(stored_g2(tmp_path, {"localhost/scratch": []})), rendered_at="now"))
    assert "contradiction" not in cover


def test_g2s_table_says_when_the_knee_was_not_found_and_what_raised_the_ceiling() -> None:
    ms = demo_measurements()
    ms |= {m.metric: m for m in raise_ceiling(ms, how="bs 8m, 2 jobs × QD 8")}
    knee = {"numjobs": 2, "iodepth": 8, "bw_bytes_per_s": 2.2e9, "bs": "8m", "parallelism": 16}
    row = G2Row.model_validate(
        {
            "measurements": {
                k: MeasurementRecord.of(m).model_dump(exclude={"evidence"}) for k, m in ms.items()
            },
            "knee": knee | {"saturated": False, "gain": 0.05},
            "ceiling": {"numjobs": 2, "iodepth": 8, "bw_bytes_per_s": 2.2e9, "bs": "8m"},
            "sweep": [],
        }
    )
    cells = fio_cells("localhost", "scratch", row)
    assert cells[6] == "16 @ 2,200 (bs 8m): not found, the sweep's last point"
    assert cells[7] == (
        "3,870 (KV restore, parallel readers: faster than fio's 2,260 at bs 8m, 2 jobs × QD 8); "
        "best single read 3,870"
    )


def test_repeats_draw_error_bars_one_trial_draws_none() -> None:
    def figures(trials: int) -> ArmFigures:
        fields = dict.fromkeys(ArmFigures.model_fields)
        return ArmFigures(**fields | {"arm": "ssd-restore", "trials": trials, "completed": trials,
                                      "ttft_p50_s": 0.4, "ttft_cv": 0.25, "invalid_reasons": [],
                                      "qualifications": []})  # fmt: skip

    def lines(chart: Chart | None) -> int:
        assert chart is not None
        return chart.svg.count("<path")

    assert repeats_sd(figures(5), 0.4) == 0.1
    assert repeats_sd(figures(1), 0.4) is None
    assert lines(ttft_chart("h/tiny", {"ssd-restore": figures(5)})) > lines(
        ttft_chart("h/tiny", {"ssd-restore": figures(1)})
    )
