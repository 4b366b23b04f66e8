"""The lab profiles' /metrics names, found in what the real engines export (issue 12).

G3's tier probe (``ColdRestore._metrics_missing``) refuses a deployment whose /metrics lacks
a counter its profile names, and the latency tables read the histograms it names. Each lab
profile's names are looked up here, with kvgate's own parser and the probe's own check, in a
recorded output of its engine (tests/data/recorded/engines/PROVENANCE.md). Where no public
output carries a name, the test says so and holds the name to the engine's source, cited.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvgate.configuration.engine_profile import EngineProfile, engine_profile
from kvgate.orchestration.g3.protocol import _has_series
from kvgate.probes.engines.metrics import Snapshot, parse

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "engines"
# A full scrape of vLLM 0.32 (V1) after prefix-cache hits: the metric set is registered by
# vllm/v1/metrics/loggers.py, the same code on GPU and CPU builds (no public GPU scrape of a
# release that has all of these names was found; see PROVENANCE.md)
VLLM_0_32 = "vllm_0.32_cpu_metrics.txt"
VLLM_LAB = (
    "vllm-lmcache",
    "vllm-lmcache-dram",
    "vllm-lmcache-serial-read",
    "vllm-lmcache-parallel-read",
    "vllm-native-tiering",
    "vllm-native-cpu",
    "vllm-recompute",
)
SGLANG_LAB = ("sglang-hicache", "sglang-hicache-dram", "sglang-recompute")


def _profile(name: str) -> EngineProfile:
    return engine_profile(name)


def _scrape(file: str) -> Snapshot:
    return parse((RECORDED / file).read_text())


def _counters(p: EngineProfile) -> list[str]:
    return [c for c in (p.hit_counter, p.warm_hit_counter) if c]


def _histograms(p: EngineProfile) -> list[str]:
    return [h for h in (p.ttft_histogram, p.itl_histogram, p.tpot_histogram) if h]


def _missing(snap: Snapshot, p: EngineProfile) -> list[str]:
    """What G3's probe would report missing, and the histograms the latency tables read."""
    missing = [c for c in _counters(p) if not _has_series(snap, c)]
    return missing + [h for h in _histograms(p) if not snap.has(f"{h}_bucket")]


@pytest.mark.parametrize("name", VLLM_LAB)
def test_vllm_lab_profile_names_are_in_vllm_0_32_metrics(name: str) -> None:
    profile = _profile(name)
    assert _counters(profile), f"{name} names no hit counter"
    assert _missing(_scrape(VLLM_0_32), profile) == []


def test_the_native_tiering_disk_hit_series_is_exported_before_any_hit() -> None:
    # vLLM 0.32 creates prompt_tokens_cached_by_source for every CacheHitSource at start, so the
    # probe finds source="disk" on a fresh engine; the recording saw device hits only
    snap = _scrape(VLLM_0_32)
    hits = _profile("vllm-native-tiering").hit_counter
    assert hits == 'vllm:prompt_tokens_cached_by_source_total{source="disk"}'
    assert snap.value("vllm:prompt_tokens_cached_by_source_total", source="disk") == 0.0
    assert snap.value("vllm:prompt_tokens_cached_by_source_total", source="device") > 0


def test_vllm_ascend_names_only_a_histogram_every_recorded_vllm_exports() -> None:
    # vllm-ascend v0.23 pairs with vLLM 0.23, of which no scrape is public: its one name is in
    # the V0 metric set and in 0.32, so in every release between
    profile = _profile("vllm-ascend")
    assert _counters(profile) == []
    for file in ("vllm_v0_cpu_metrics.txt", VLLM_0_32):
        assert _missing(_scrape(file), profile) == [], file


@pytest.mark.parametrize("name", SGLANG_LAB)
def test_sglang_ttft_histogram_is_in_a_real_sglang_scrape(name: str) -> None:
    assert _scrape("sglang_pd_ttft_histogram.txt").has(f"{_profile(name).ttft_histogram}_bucket")


# SGLang's metrics collector, observe_one_finished_request: device and host hits are reported
# as cache_source "device"/"host", storage hits as report_cache_source(f"storage_{backend}", ...),
# backend being type(cache_controller.storage_backend).__name__ (scheduler
# _get_storage_backend_type); `--hicache-storage-backend file` is the class HiCacheFile. No public
# scrape carries a storage series (they appear at the first hit), so the label is held to that.
SGLANG_STORAGE_SOURCE = "storage_HiCacheFile"


def test_sglang_hicache_storage_hits_select_the_label_sglang_writes() -> None:
    profile = _profile("sglang-hicache")
    assert "--hicache-storage-backend" in profile.launch
    assert profile.launch[profile.launch.index("--hicache-storage-backend") + 1] == "file"
    written = parse(
        f'sglang:cached_tokens_total{{cache_source="device",model_name="m"}} 64\n'
        f'sglang:cached_tokens_total{{cache_source="{SGLANG_STORAGE_SOURCE}",model_name="m"}} 128\n'
    )
    assert profile.hit_counter is not None
    assert _has_series(written, profile.hit_counter)
    assert written.value("sglang:cached_tokens_total") == 192.0  # the warm counter sums every tier


# Names SGLang's TokenizerMetricsCollector registers (sgl-project/sglang
# python/sglang/srt/metrics/collector.py at 93d04878): each series is created at its first
# observation, so only a scrape after traffic shows them; the ITL one is in no public scrape found
SGLANG_SOURCE_NAMES = {
    "sglang:cached_tokens_total",
    "sglang:time_to_first_token_seconds",
    "sglang:inter_token_latency_seconds",
}


@pytest.mark.parametrize("name", SGLANG_LAB)
def test_sglang_profile_names_are_registered_by_sglang(name: str) -> None:
    profile = _profile(name)
    named = {n.split("{")[0] for n in [*_counters(profile), *_histograms(profile)]}
    assert named <= SGLANG_SOURCE_NAMES
