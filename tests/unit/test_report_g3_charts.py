"""G3's and G4's charts are drawn from the raw numbers the run record keeps, with axis titles and bands."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kvgate.configuration.gate_profiles.g3 import load_g3_profile
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.record import ArmFigures
from kvgate.record.store import RunStore
from kvgate.report import load_run
from kvgate.report.charts import Chart
from kvgate.report.plots import charts
from kvgate.report.svg import sanitize

GB = 1e9


def arm(name: str, p50: float, *, tput: float = 10.0, bw: float | None = None) -> tuple[str, dict[str, Any]]:
    """(name, the arm's summary as G3 records it: ArmFigures); what no chart reads, unmeasured."""
    none = dict.fromkeys(("device_read_bytes_p50", "engine_read_bytes_p50", "hit_tokens_p50"), None)
    none |= dict.fromkeys(("cache_growth_bytes_p50", "predicted_bytes_p50", "restart_to_ready_p50_s"), None)
    summary = ArmFigures(
        arm=name,
        trials=5,
        completed=5,
        ttft_p50_s=p50,
        ttft_p90_s=p50 * 1.3,
        ttft_p99_s=p50 * 1.5,
        ttft_cv=0.1,
        e2e_p50_s=p50 + 0.2,
        output_throughput_tok_per_s=tput,
        prompt_tokens_p50=2048,
        read_bw_gb_per_s=bw,
        **none,
    )
    return name, summary.model_dump()


# numbers of a real smoke G3 run here (tests/data/runs/hma1), with R1's readers and a planner row added
ARMS = dict(
    [
        arm("recompute", 11.4, tput=1.03),
        arm("ssd-restore", 0.23, tput=29.1, bw=0.21),
        arm("dram-only@c8", 9.16, tput=6.67),
        arm("ssd-tier@c8", 6.65, tput=10.0),
        arm("dram-only@whole", 5.76, tput=4.13),
        arm("ssd-tier@whole", 1.48, tput=12.2),
        arm("serial-read@c4", 2.0, bw=0.4),
        arm("parallel-read@c4", 0.5, bw=1.9),
    ]
)
PREDICTIONS = [
    {
        "concurrency": 1,
        "prompt_tokens": 2048,
        "restore_ttft_s": [0.12, 0.23],
        "recompute_ttft_s": [None, 11.4],
        "storage_floor_s": 0.1,
        "tier_bytes": 2e8,
        "ceiling": "G2",
    }
]
G2 = {
    "measured": True,
    "read_ceiling_bytes_per_s": 1.36 * GB,
    "kv_restore_request_bytes_per_s": 0.4 * GB,
    "best_read_bytes_per_s": 1.41 * GB,
    "source": "G2",
}
VOLUMES = {  # engine weight load measured on neither volume
    "scratch": {
        "role": "candidate",
        "model_load_s": 0.8,
        "engine_weights_load_s": None,
        "engine_ready_s": 3.1,
        "checkpoint_write_s": 2.0,
    },
    "nfs": {
        "role": "baseline",
        "model_load_s": 2.4,
        "engine_weights_load_s": None,
        "engine_ready_s": 6.0,
        "checkpoint_write_s": None,
    },
}


FIGURES = {"arms": ARMS, "predictions": PREDICTIONS, "g2": G2}


def g3_run(root: Path, figures: dict[str, Any] | None = FIGURES) -> Path:
    """G3 rows as recorded on 2026-12-05: cells, the raw figures beside them (None: without)."""
    rows: dict[str, Any] = {"arms": [], "evidence": [], "verdicts": [], "engines": [], "limits": ""}
    g3_rows = {
        "h/tiny": rows | ({"figures": figures} if figures is not None else {}),
        "h/storage[scratch]": rows | {"figures": {"volumes": VOLUMES}},
    }
    profile = load_g3_profile("smoke").model_dump(mode="json")
    meta = {"planned": [], "g3_rows": g3_rows, "configuration": {"gate_profile": profile}}
    store = RunStore.create(root, site="lab-a", gate="g3", meta=meta)
    store.finish("complete")
    return store.path


def by_title(found: tuple[Chart, ...], start: str) -> Chart:
    (chart,) = [c for c in found if c.title.startswith(start)]
    assert sanitize(chart.svg) == chart.svg  # what the allow-list keeps, unchanged
    return chart


def texts(svg: str) -> list[str]:
    return re.findall(r">([^<>]+)</text>", svg)


def test_ttft_distribution_shows_every_arm_at_every_level_with_a_time_axis(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g3_run(tmp_path))), "TTFT distribution per arm and load — h/tiny")
    shown = texts(chart.svg)
    assert "time to first token (s, log scale)" in shown
    for label in ("recompute · one prompt", "ssd-tier · conc 8", "dram-only · whole machine"):
        assert label in shown


def test_throughput_is_drawn_against_the_reference_band_of_its_baseline(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g3_run(tmp_path))), "Throughput against the reference bands")
    assert "output throughput (tokens/s)" in texts(chart.svg)
    shown = texts(chart.svg)
    # the gate profile's bindings: R2/R3 at conc 8 (dram-only → ssd-tier) and R3's whole machine
    assert {"R2/R3 conc 8", "R3 whole machine", "the seed's range", "baseline arm"} <= set(shown)
    assert "shaded: the seed's range applied to the baseline" in chart.caption


def test_r1_readers_are_drawn_with_the_g2_ceiling_of_the_volume(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g3_run(tmp_path))), "Cold restore: serial vs parallel reader (R1)")
    shown = texts(chart.svg)
    assert "restore read bandwidth (GB/s)" in shown
    assert "TTFT p50 (s)" in shown
    assert "G2's read ceiling of the volume" in chart.caption
    assert 'stroke="#c62828"' in chart.svg  # the ceiling's line
    assert "serial-read · conc 4" in shown


def test_model_load_and_checkpoint_compare_the_candidate_with_the_baseline(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g3_run(tmp_path))), "Model load and checkpoint: candidate vs baseline")
    shown = texts(chart.svg)
    assert "time (s)" in shown
    assert {"baseline nfs", "candidate scratch", "engine launch to ready"} <= set(shown)
    assert "engine weight load" not in shown  # measured on neither volume: no empty row


def test_planner_prediction_stands_beside_the_measurement(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g3_run(tmp_path))), "Planner: predicted vs measured TTFT")
    shown = texts(chart.svg)
    assert {"predicted", "measured", "restore · one prompt", "recompute · one prompt"} <= set(shown)
    assert "TTFT p50 (s, log scale)" in shown  # 0.12 s beside 11.4 s: both readable


def test_a_run_recorded_without_raw_figures_gets_no_g3_chart(tmp_path: Path) -> None:
    view = load_run(g3_run(tmp_path, figures=None))
    titles = [c.title for c in charts(view)]
    assert not [t for t in titles if "h/tiny" in t]


def window(i: int, *, ttft: float, tput: float, rss_mib: float, tier: int, hits: int) -> dict[str, Any]:
    summary = {
        "p50_ttft_ms": ttft,
        "p99_ttft_ms": ttft * 3,
        "output_throughput_tok_per_s": tput,
        "total_input_tokens": 1000,
    }
    return {
        "index": i,
        "start_unix_s": 20.0 * i,
        "end_unix_s": 20.0 * (i + 1),
        "summary": summary,
        "rss_kib": rss_mib * 1024,
        "cache_dir_bytes": tier,
        "hit_tokens": hits,
        "canary": [],
    }


def g4_run(root: Path, windows: int = 6) -> Path:
    profile = load_g4_profile("smoke").model_dump(mode="json")
    meta = {
        "planned": [],
        "configuration": {"gate_profile": profile},
        "g4_rows": {
            "h/tiny": {"windows": [], "verdicts": [], "notes": "", "figures": {"cap_bytes": 4 << 30}}
        },
    }
    store = RunStore.create(root, site="lab-a", gate="g4", meta=meta)
    lines = [
        window(i, ttft=100 + i, tput=160 - i, rss_mib=900 + i, tier=(i + 1) << 20, hits=500)
        for i in range(windows)
    ]
    path = store.path / "artifacts" / "h" / "g4" / "tiny" / "windows.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(w) + "\n" for w in lines) + '{"torn')
    store.finish("complete")
    return store.path


def test_a_soak_shows_every_series_with_its_windows_and_drift_bounds(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g4_run(tmp_path))), "Soak over time — h/tiny")
    shown = texts(chart.svg)
    for title in ("TTFT (ms)", "output (tok/s)", "engine RSS (MiB)", "tier (% of capacity)", "hit ratio"):
        assert title in shown
    assert "minutes since the soak started" in shown  # a short soak: minutes, not 0.005 h
    assert "No bounds drawn" not in chart.caption
    # the TTFT bound: the median of the first two windows after one warm-up window (101, 102) × 2.0
    assert chart.svg.count('stroke="#c62828"') == 5  # four drift bounds and the tier's capacity


def test_a_soak_without_its_gate_profile_is_drawn_without_bounds_and_says_so(tmp_path: Path) -> None:
    run = g4_run(tmp_path)
    meta = json.loads((run / "run.json").read_text())
    meta["configuration"] = {}
    (run / "run.json").write_text(json.dumps(meta))
    (chart,) = [c for c in charts(load_run(run)) if c.title.startswith("Soak")]
    assert "No bounds drawn: no gate profile" in chart.caption


def test_a_soak_of_thousands_of_windows_is_drawn_within_the_allow_lists_size(tmp_path: Path) -> None:
    """72 h at 10-second windows: 25,920 windows; the chart draws 1,000 of them and says so."""
    chart = by_title(charts(load_run(g4_run(tmp_path, 25_920))), "Soak over time — h/tiny")
    assert len(chart.svg) < 1 << 20
    assert "1000 of the 25920 windows are drawn" in chart.caption


def test_the_g2_ceiling_line_stays_inside_the_r1_chart_when_far_above_the_readers(tmp_path: Path) -> None:
    """The allow-list drops clip paths: a line past the axis limits would be drawn over the next panel."""
    g2 = G2 | {"read_ceiling_bytes_per_s": 9 * GB}  # readers at 0.4 and 1.9 GB/s
    chart = by_title(charts(load_run(g3_run(tmp_path, FIGURES | {"g2": g2}))), "Cold restore")
    assert ">8</text>" in chart.svg  # the bandwidth axis reaches past 9 GB/s: tick labels up to 8
