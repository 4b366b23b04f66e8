"""G4 trends and verdicts on synthetic soak windows (the shape kvgate.probes.agent.soak writes)."""

from __future__ import annotations

from typing import Any

import pytest

from kvgate.base.criteria import Inputs, Verdict
from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.configuration.gate_profiles.g4 import G4Profile, load_g4_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g4 import trends
from kvgate.orchestration.g4.plan import criteria, g4_check, plan, skip_reason, soaked_profile

SMOKE = load_g4_profile("smoke")  # 20-s windows, warm-up 1, baseline 2


def window(i: int, **over: Any) -> dict[str, Any]:
    """Window i of a healthy soak: 20 s each, steady numbers, the canary unchanged."""
    summary = {
        "completed": 40,
        "failed": 0,
        "error_counts": {},
        "total_input_tokens": 20000,
        "p50_ttft_ms": 100.0,
        "p99_ttft_ms": 150.0,
        "p50_tpot_ms": 10.0,
        "output_throughput_tok_per_s": 50.0,
    } | over.pop("summary", {})
    canary = over.pop(
        "canary", [{"index": 0, "success": True, "text": " a b", "prompt_tokens": 500, "logprobs": []}]
    )
    return {
        "index": i,
        "start_unix_s": 1000.0 + 20 * i,
        "end_unix_s": 1020.0 + 20 * i,
        "summary": summary,
        "empty_responses": 0,
        "engines_alive": 1,
        "canary": canary,
        "rss_kib": 512 * 1024,
        "cache_dir_bytes": 10 << 20,
        "hit_tokens": 9000,
        "reuse_ttft_p50_ms": 50.0,
        "fresh_ttft_p50_ms": 150.0,
        "device_read_bytes": 0,
        "device_write_bytes": 0,
    } | over


def soak(windows: list[dict[str, Any]], **over: Any) -> trends.Soak:
    fields = {"duration_s": 120, "engines": 1, "cap_bytes": 100 << 20, "ended": "duration"} | over
    return trends.Soak(tuple(windows), **fields)


def judged(s: trends.Soak, key: str, profile: G4Profile = SMOKE) -> Verdict:
    crit = dict(criteria(profile))[key]
    measured = {
        "coverage": trends.coverage(s),
        "failed-requests": trends.failed_requests(s),
        "empty-responses": trends.empty_responses(s),
        "engines-up": trends.engine_deaths(s),
        "canary": trends.canary_mismatches(s)[0],
        "cache-capacity": trends.cache_peak(s),
        "hit-retention": trends.hit_retention(s, profile),
    }
    return g4_check("h", "d", f"soak[d].{key}", key, crit, ruled=None).evaluate(Inputs(measured)).verdict


HEALTHY = [window(i) for i in range(6)]
MEASURED_HERE = ("coverage", "failed-requests", "empty-responses", "engines-up", "canary", "cache-capacity")
MEASURED_HERE += ("hit-retention",)  # drift: test_g4_drift; integrity: test_g4_integrity
FAILED = window(5, summary={"failed": 1, "error_counts": {"HTTP 500": 1}})


@pytest.mark.parametrize("key", [k for k, _ in criteria(SMOKE) if k in MEASURED_HERE])
def test_a_steady_soak_passes_every_check(key: str) -> None:
    assert judged(soak(HEALTHY), key) is Verdict.PASS


@pytest.mark.parametrize(
    ("key", "windows"),
    [
        ("coverage", HEALTHY[:3]),  # ended after 3 of 6 windows
        ("failed-requests", [*HEALTHY[:5], FAILED]),
        ("empty-responses", [*HEALTHY[:5], window(5, empty_responses=2)]),
        ("engines-up", [*HEALTHY[:5], window(5, engines_alive=0)]),
        (
            "canary",
            [
                *HEALTHY[:5],
                window(
                    5,
                    canary=[
                        {"index": 0, "success": True, "text": " a c", "prompt_tokens": 500, "logprobs": []}
                    ],
                ),
            ],
        ),
        ("cache-capacity", [*HEALTHY[:5], window(5, cache_dir_bytes=101 << 20)]),
        ("hit-retention", [*HEALTHY[:4], window(4, hit_tokens=100), window(5, hit_tokens=100)]),
    ],
)
def test_each_failure_mode_fails_its_check(key: str, windows: list[dict[str, Any]]) -> None:
    assert judged(soak(windows), key) is Verdict.FAIL


def test_too_short_a_soak_is_invalid_never_pass() -> None:
    short = soak(HEALTHY[:2])
    assert judged(short, "hit-retention") is Verdict.INVALID
    assert "window(s), 5 needed" in str(trends.hit_retention(short, SMOKE).invalid_reason)
    assert judged(soak([]), "failed-requests") is Verdict.INVALID  # no window: not zero errors


def test_a_tier_that_served_nothing_is_invalid_not_a_pass() -> None:
    never = soak([window(i, hit_tokens=0) for i in range(6)])
    m = trends.hit_retention(never, SMOKE)
    assert m.value is None
    assert "never read" in str(m.invalid_reason)


def test_a_hit_counter_that_could_not_be_read_is_named_as_such() -> None:
    unread = [
        *HEALTHY[:3],
        *(window(i, hit_tokens=None, metrics_errors=["http://x/metrics: refused"]) for i in range(3, 6)),
    ]
    reason = str(trends.hit_retention(soak(unread), SMOKE).invalid_reason)
    assert "could not be read in 2 window(s): http://x/metrics: refused" in reason


def test_what_was_never_compared_or_filled_is_invalid_not_a_pass() -> None:
    failed = [{"index": 0, "success": False, "text": "", "prompt_tokens": None, "logprobs": []}]
    assert judged(soak([window(i, canary=failed) for i in range(6)]), "canary") is Verdict.INVALID
    assert judged(soak([window(i, cache_dir_bytes=0) for i in range(6)]), "cache-capacity") is Verdict.INVALID
    no_dir = [window(i, cache_dir_bytes=None) for i in range(6)]
    assert judged(soak(no_dir), "cache-capacity") is Verdict.INVALID
    # the agent crashed after enough windows: coverage is not trusted
    assert judged(soak(HEALTHY, ended="failed"), "coverage") is Verdict.INVALID
    assert judged(soak(HEALTHY[:3], ended="cancelled"), "coverage") is Verdict.FAIL  # kvgate stop: short


def test_a_near_tie_in_the_canary_is_tolerated_and_listed() -> None:
    def canary(text: str, token: str, alt: str) -> list[dict[str, Any]]:
        lp = [{"token": token, "logprob": -0.69, "top": {token: -0.69, alt: -0.70}}]
        return [{"index": 0, "success": True, "text": text, "prompt_tokens": 5, "logprobs": lp}]

    ws = [window(0, canary=canary(" a", " a", " b")), window(1, canary=canary(" b", " b", " a"))]
    m, bad, ties = trends.canary_mismatches(soak(ws))
    assert (m.value, bad, len(ties)) == (0, [], 1)


def test_what_a_profile_cannot_show_is_skipped_with_its_reason() -> None:
    vllm_cpu = load_profile(PROFILE_DIR / "vllm-cpu-prefix.yaml")
    llama = load_profile(PROFILE_DIR / "llama-cpp-disk.yaml")
    assert "no external KV tier" in str(skip_reason("cache-capacity", vllm_cpu))
    assert skip_reason("hit-retention", vllm_cpu) is None
    assert skip_reason("hit-retention", llama) is None  # its log names what it restored
    ascend = load_profile(PROFILE_DIR / "vllm-ascend.yaml")
    assert "no hit counter" in str(skip_reason("hit-retention", ascend))
    assert skip_reason("cache-capacity", llama) is None


def test_a_profile_too_short_for_its_trend_windows_is_refused() -> None:
    data = SMOKE.model_dump() | {"duration_s": 40}
    with pytest.raises(ValueError, match="fewer than warmup_windows"):
        G4Profile.model_validate(data)


def test_a_deployment_on_no_host_is_an_invalid_check_not_silently_unsoaked() -> None:
    dep = {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute", "volume": "v"}
    inv = Inventory.model_validate(
        {
            "site": "s",
            "hosts": {"c": {"roles": ["control"]}},
            "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}},
            "engines": {"tiny": dep},
        }
    )
    (check,) = plan(in_memory(inv))
    j = check.evaluate()
    assert (check.check, j.verdict) == ("engines[tiny].hosts", Verdict.INVALID)
    assert "runs on no host" in j.condition


def test_a_tier_that_cannot_hold_a_document_set_is_soaked_as_the_one_its_profile_names() -> None:
    # a reader found the demo's soak fill 0.25 % of llama-cpp-disk's tier, whose lookup removes what it finds
    def soaked(tier: str) -> str:
        dep = {"tier_profile": tier, "recompute_profile": "llama-cpp-recompute", "volume": "v"}
        inv = Inventory.model_validate(
            {
                "site": "s",
                "hosts": {"h": {"roles": ["engine"]}},
                "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}},
                "engines": {"tiny": dep},
            }
        )
        return soaked_profile(in_memory(inv), "tiny").name

    assert soaked("llama-cpp-disk") == "llama-cpp-disk-keep"  # G3's capacity ssd-tier: it holds a set
    assert soaked("vllm-cpu-prefix") == "vllm-cpu-prefix"  # no other named: its own


def test_hits_without_a_prompt_count_are_invalid_for_that_reason_not_an_unread_tier() -> None:
    # the first soak with llama.cpp's logged hits: thousands of tokens restored per window, but the server
    # streamed no usage, and G4 said "the tier was never read"
    unsized = [window(i, summary={"total_input_tokens": None}, canary=[]) for i in range(6)]
    m = trends.hit_retention(soak(unsized), SMOKE)
    assert m.value is None
    assert "served tokens from cache, but neither the responses nor the engines' logs" in str(
        m.invalid_reason
    )
    logged = [w | {"logged_prompt_tokens": 18_000} for w in unsized]
    assert trends.hit_retention(soak(logged), SMOKE).value == 1.0
