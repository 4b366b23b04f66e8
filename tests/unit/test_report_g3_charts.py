"""G3's and G4's charts are drawn from the raw numbers the run record keeps, with axis titles and bands."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kvgate.configuration.gate_profiles.g3 import load_g3_profile
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.configuration.references import load_references
from kvgate.orchestration.g4 import drift, health, integrity
from kvgate.record import ArmFigures
from kvgate.record.store import RunStore
from kvgate.report.charts import Chart
from kvgate.report.g3_figures import bindings, deployments
from kvgate.report.g3_plots import Bound, throughput_chart, ttft_chart
from kvgate.report.model import load_run
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
        arm("baseline-volume@c8", 9.0, tput=7.0),
        arm("candidate-volume@c8", 6.5, tput=9.8),
        arm("baseline-volume-whole@c8", 8.0, tput=8.0),
        arm("candidate-volume-whole@c8", 5.9, tput=11.0),
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
        "model_load_metric": "model_load.sequential.elapsed_s",
        "engine_weights_load_s": None,
        "engine_ready_s": 3.1,
        "checkpoint_write_s": 2.0,
    },
    "nfs": {
        "role": "baseline",
        "model_load_s": 2.4,
        "model_load_metric": "model_load.sequential.elapsed_s",
        "engine_weights_load_s": None,
        "engine_ready_s": 6.0,
        "checkpoint_write_s": None,
    },
}


FIGURES = {"arms": ARMS, "predictions": PREDICTIONS, "g2": G2}


FACTS = {
    "tier": "llama-cpp-disk",
    "kind": "llama-cpp",
    "model": "a Llama generated here",
    "serves_concurrently": False,
    "external_tier": True,
    "tier_notes": "",
    "near_ties": [],
    "loadgen_address": None,
    "capacity_figure": True,
}
STORAGE = {  # each volume's model load, the measurement its figures name
    "candidate": "scratch",
    "baseline": "nfs",
    "devices": {},
    "measured": {
        v: {
            f["model_load_metric"]: {
                "metric": f["model_load_metric"],
                "value": f["model_load_s"],
                "unit": "s",
            }
        }
        for v, f in VOLUMES.items()
        if f.get("model_load_metric")
    },
}


def g3_configuration() -> dict[str, Any]:
    """The smoke G3 profile and every reference it binds, as G3 records them."""
    profile = load_g3_profile("smoke")
    bound = {i: load_references().get(i).model_dump(mode="json") for i in profile.reference_ids()}
    return {"gate_profile": profile.model_dump(mode="json"), "bound_references": bound}


def g3_run(root: Path, figures: dict[str, Any] = FIGURES) -> Path:
    """G3 rows as G3 records them, without verdicts: the raw figures the charts read."""
    g3_rows = {
        "h/tiny": {"deployment": FACTS, "verdicts": [], "serving": [], "figures": figures},
        "h/storage[scratch]": {"volumes": STORAGE, "verdicts": [], "figures": {"volumes": VOLUMES}},
    }
    meta = {"planned": [], "g3_rows": g3_rows, "configuration": g3_configuration()}
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


def test_an_arm_another_reader_shared_the_device_with_is_marked_on_the_ttft_chart() -> None:
    """A reader found dram-only@c8 qualified in 3 of 3 loads, yet drawn unmarked beside the others."""
    arm = ArmFigures.model_validate(
        {"arm": "dram-only@c8", "trials": 3, "completed": 3, "ttft_p50_s": 5.7, "ttft_p90_s": 9.9}
        | dict.fromkeys(
            ("ttft_p99_s", "ttft_cv", "e2e_p50_s", "output_throughput_tok_per_s", "prompt_tokens_p50"), None
        )
        | dict.fromkeys(
            ("device_read_bytes_p50", "engine_read_bytes_p50", "hit_tokens_p50", "cache_growth_bytes_p50"),
            None,
        )
        | {"predicted_bytes_p50": None, "restart_to_ready_p50_s": None}
        | {"qualifications": ["trial 0: another reader shared the device: it read 0.28 GB …"]}
    )
    chart = ttft_chart(
        "h/tiny",
        {
            "dram-only@c8": arm,
            "ssd-tier@c8": arm.model_copy(update={"arm": "ssd-tier@c8", "qualifications": []}),
        },
    )
    assert chart is not None
    assert "dram-only · conc 8 (shared)" in texts(chart.svg)
    assert "ssd-tier · conc 8" in texts(chart.svg)


def test_throughput_is_drawn_against_the_reference_band_of_its_baseline(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g3_run(tmp_path))), "Throughput against the reference bands")
    assert "output throughput (tokens/s)" in texts(chart.svg)
    shown = texts(chart.svg)
    # the gate profile's bindings: R2/R3 at conc 8 and R3's whole machine (baseline → candidate volume)
    assert {"R2/R3 conc 8", "R3 whole machine conc 8", "the seed's range", "baseline arm"} <= set(shown)
    assert "shaded, behind a judged pair only: the seed's range applied to the baseline" in chart.caption


def test_an_unjudged_pair_is_not_drawn_against_the_seeds_range(tmp_path: Path) -> None:
    # a reader took grey bars far past the shaded range for the +55 % the text said was not comparable
    view = load_run(g3_run(tmp_path))
    ((_, figs),) = [d for d in deployments(view) if d[0] == "h/tiny"]
    chart = throughput_chart("h/tiny", figs.arms, Bound(bindings(view), ()), view.reference)
    assert chart is not None
    shown = texts(chart.svg)
    assert "the seed's range" not in shown
    assert "candidate arm, not judged (SKIP)" in shown


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


def test_a_deployment_without_arms_gets_no_g3_chart(tmp_path: Path) -> None:
    view = load_run(g3_run(tmp_path, figures={"arms": {}, "predictions": []}))
    titles = [c.title for c in charts(view)]
    assert not [t for t in titles if "h/tiny" in t]


def window(i: int, *, ttft: float, tput: float, rss_mib: float, tier: int, hits: int) -> dict[str, Any]:
    summary = {
        "p50_ttft_ms": ttft,
        "p99_ttft_ms": ttft * 3,
        "output_throughput_tok_per_s": tput,
        "total_input_tokens": 1000,
        "completed": 10,
        "failed": 0,
        "p50_tpot_ms": 5.0,
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
        "empty_responses": 0,
        "reuse_ttft_p50_ms": None,
        "fresh_ttft_p50_ms": None,
        "device_read_bytes": None,
        "device_write_bytes": None,
    }


def drift_verdict(key: str, verdict: str) -> dict[str, object]:
    return {
        "check": f"soak[tiny].{key}",
        "measured": 1.0,
        "unit": "x",
        "comparator": "<=",
        "expected": 2.0,
        "expected_unit": "x",
        "source": "G4-DRIFT",
        "verdict": verdict,
    }


def g4_run(root: Path, windows: int = 6, *, judged: bool = True, verdict: str = "PASS") -> Path:
    """A G4 run of ``windows`` soak windows; its slopes fitted (judged=False: none) and their checks
    ruled ``verdict`` (SKIP: fitted, not judged, as on a soak too short for an hourly slope)."""
    profile = load_g4_profile("smoke")
    lines = [
        window(i, ttft=100 + i, tput=160 - i, rss_mib=900 + i, tier=(i + 1) << 20, hits=500)
        for i in range(windows)
    ]
    keys = ("ttft-drift", "throughput-retention", "memory-growth", "tier-growth")
    row = {  # as G4 stores it: its verdicts and the slopes it fitted beside its figures
        "verdicts": [drift_verdict(k, verdict) for k in keys] if judged else [],
        "soak": {"ended": "duration", "near_ties": [], "tier": "t", "model": "m"}
        | {"serves_concurrently": True},
        "figures": {"cap_bytes": 4 << 30},
        "integrity": integrity.figures(integrity.Followed(), lines, volume="v", share=1 << 20),
        "drift": drift.drift(lines, profile, 4 << 30) if judged else [],
        "health": health.figures([], {"since_unix_s": 0.0, "until_unix_s": 1.0}, {}, {}),
    }
    meta = {
        "planned": [],
        "configuration": {"gate_profile": profile.model_dump(mode="json")},
        "g4_rows": {"h/tiny": row},
    }
    store = RunStore.create(root, site="lab-a", gate="g4", meta=meta)
    path = store.path / "artifacts" / "h" / "g4" / "tiny" / "windows.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(w) + "\n" for w in lines) + '{"torn')
    store.finish("complete")
    return store.path


def test_a_soak_shows_every_series_with_its_windows_and_drift_bounds(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g4_run(tmp_path))), "Soak over time — h/tiny")
    shown = texts(chart.svg)
    for title in ("TTFT (s)", "output (tok/s)", "engine RSS (MiB)", "tier (% of capacity)", "hit ratio"):
        assert title in shown
    assert "minutes since the soak started" in shown  # a short soak: minutes, not 0.005 h
    assert "red where G4 judged it, orange where it was fitted but not judged" in chart.caption
    # per judged series (TTFT p99, throughput, RSS, tier): its fit and its limit's slope; the tier's cap
    assert chart.svg.count('stroke="#c62828"') == 9 + 3  # and the legend's keys of fit, limit and cap
    assert "TTFT p99 limit" in shown  # each limit line named on the chart
    assert set(re.findall(r'font-size="([\d.]+)"', chart.svg)) == {"8"}  # none smaller: legible on a phone


def test_a_slope_fitted_on_a_soak_too_short_to_judge_is_grey_and_says_not_judged(tmp_path: Path) -> None:
    chart = by_title(charts(load_run(g4_run(tmp_path, verdict="SKIP"))), "Soak over time — h/tiny")
    assert "slope G4 judged" not in chart.svg
    assert "slope (not judged)" in texts(chart.svg)
    assert chart.svg.count('stroke="#c62828"') == 4 + 1 + 2  # the 4 limits' slopes, the cap, 2 legend keys


def test_a_soak_stored_without_judged_slopes_draws_none(tmp_path: Path) -> None:
    (chart,) = [c for c in charts(load_run(g4_run(tmp_path, judged=False))) if c.title.startswith("Soak")]
    assert chart.svg.count('stroke="#c62828"') == 2  # the tier's capacity and its legend key: nothing fitted
    assert "slope G4 judged" not in chart.svg


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
