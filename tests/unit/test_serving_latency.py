"""The engine's own latency beside the client's (issue 13 item 10): histograms, the null server, G3's rows.

On main a G3 load kept only the engine's mean TTFT; there was no ITL/TPOT from the engine,
no quantile of a histogram and no self-measuring null server: these tests fail there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nullserver import NullConfig, NullServer

from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.orchestration.g3.load_arms import LoadTrial
from kvgate.orchestration.g3.serving import as_recorded, level_latency
from kvgate.probes.engines.latency import engines_latency, histograms
from kvgate.probes.engines.metrics import Histogram, diff, parse
from kvgate.probes.loadgen import LoadConfig, PromptSpec, run
from kvgate.probes.workload_results import kv_measurements
from kvgate.record.gate_rows import ServingLevel
from kvgate.report.g3_extra_tables import serving_cells

RECORDED = Path(__file__).parents[1] / "data" / "recorded"
V0_CPU = (RECORDED / "engines" / "vllm_v0_cpu_metrics.txt").read_text()


def test_quantile_interpolates_inside_the_bucket_that_holds_the_rank_as_prometheus_does() -> None:
    """Recorded vLLM CPU TTFT histogram: 69 observations; rank 34.5 lies in (7.5, 10] holding 31..36."""
    h = parse(V0_CPU).histogram("vllm:time_to_first_token_seconds")
    assert h.count == 69
    assert h.quantile(0.5) == pytest.approx(7.5 + 2.5 * (34.5 - 31) / 5)
    assert h.quantile(0.9) == pytest.approx(160 + 480 * (62.1 - 56) / 13)
    inf_only = Histogram(((1.0, 0.0), (float("inf"), 3.0)), 9.0, 3.0)
    assert inf_only.quantile(0.5) == 1.0  # a rank in +Inf: the highest finite bound


def test_a_profiles_histograms_give_exact_means_and_estimated_p50s() -> None:
    profile = load_profile(PROFILE_DIR / "vllm-cpu-recompute.yaml")
    assert (profile.itl_histogram, profile.tpot_histogram) == (
        "vllm:inter_token_latency_seconds",
        "vllm:request_time_per_output_token_seconds",
    )
    found = histograms(parse(V0_CPU), profile)
    assert set(found) == {"ttft"}  # a V0 server exports no ITL/TPOT histograms under these names
    latency = engines_latency([found, found])  # two engines driven together: summed bucket by bucket
    assert latency is not None
    assert latency["count_ttft"] == 138
    assert latency["mean_ttft_ms"] == pytest.approx(4941.843970537186 / 69 * 1000)
    assert latency["p50_ttft_ms"] == pytest.approx(9250.0)
    assert engines_latency([{}]) is None


def test_a_vllm_032_scrape_gives_ttft_itl_and_tpot_as_the_profile_names_them() -> None:
    """Recorded on this machine's vLLM 0.32 CPU server (engines/PROVENANCE.md)."""
    text = (RECORDED / "engines" / "vllm_0.32_cpu_latency_histograms.txt").read_text()
    found = histograms(parse(text), load_profile(PROFILE_DIR / "vllm-cpu-recompute.yaml"))
    assert set(found) == {"ttft", "itl", "tpot"}
    latency = engines_latency([found])
    assert latency is not None
    assert (latency["count_ttft"], latency["count_itl"], latency["count_tpot"]) == (400, 6000, 400)
    assert latency["mean_tpot_ms"] == pytest.approx(10.139632773999683 / 400 * 1000)
    assert latency["mean_itl_ms"] == pytest.approx(152.0944916099952 / 6000 * 1000)
    assert 0 < latency["p50_itl_ms"] < latency["mean_itl_ms"] * 4


def test_the_null_server_measures_itself_as_vllm_does_and_agrees_with_the_client() -> None:
    server = NullServer(NullConfig(first_token_delay_s=0.02, token_delay_s=0.004))
    with server.in_thread() as url:
        before = parse(_get(url + "/metrics"))
        config = LoadConfig(urls=(url,), model="m", max_tokens=12, max_concurrency=2)
        summary = run(config, PromptSpec(salt="s", prompt_tokens=64).prompts(4)).summary()
        window = diff(before, parse(_get(url + "/metrics")))
    tpot = window.histogram("vllm:request_time_per_output_token_seconds")
    assert window.histogram("vllm:time_to_first_token_seconds").count == 4
    assert window.histogram("vllm:inter_token_latency_seconds").count == 4 * 11
    assert tpot.mean * 1000 == pytest.approx(summary["mean_tpot_ms"], rel=0.1)  # the client reads the server


def _get(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as r:
        return str(r.read().decode())


def trial(arm: str, c: int, ttft_ms: float, engine: dict[str, float] | None) -> LoadTrial:
    summary = {"p50_ttft_ms": ttft_ms, "mean_ttft_ms": ttft_ms + 2, "p50_tpot_ms": 2.0, "mean_tpot_ms": 2.1}
    return LoadTrial(arm, c, 0, "s", summary, None, None, (), server_latency=engine)


def test_g3_shows_every_load_as_client_beside_engine_medians_over_trials() -> None:
    engine = {"mean_ttft_ms": 30.0, "p50_ttft_ms": 28.0, "mean_tpot_ms": 2.0}
    loads = {
        "warm": [trial("warm", 8, 40.0, engine), trial("warm", 8, 50.0, engine), trial("warm", 8, 60.0, None)]
    }
    levels = level_latency(loads, {"recompute": [trial("recompute", 16, 90.0, None)]})
    assert list(levels) == ["recompute@whole", "warm@c8"]
    assert levels["warm@c8"]["client"]["p50_ttft_ms"] == 50.0
    assert levels["warm@c8"]["engine"] == engine  # the trial without a scrape does not count
    kept = [ServingLevel.model_validate(json.loads(json.dumps(v))) for v in as_recorded(levels)]  # run.json's
    (whole, warm) = serving_cells("h/vllm", kept)
    assert warm[:4] == ["h/vllm", "warm@c8", "0.05 / ≈0.028", "0.052 / 0.03"]  # TTFT in s
    assert whole[2] == "0.09 / —"  # an engine without histograms: said, not invented


def test_g2_kv_restore_records_its_concurrency_and_one_requests_bandwidth() -> None:
    res = json.loads((RECORDED / "agent" / "smoke-kv-restore.json").read_text())
    found = {m.metric: m for m in kv_measurements(res, "ev")}
    assert found["kv_restore.requests"].value == 8
    parallel = next(r for r in res["restores"] if r["readers_per_request"] == 4)
    per_request = found["kv_restore.parallel.request_bytes_per_s"]
    assert per_request.value == pytest.approx(134217728 / parallel["restore_latency_p50_s"])
    assert per_request.invalid_reason == found["kv_restore.parallel.read_bw_bytes_per_s"].invalid_reason
