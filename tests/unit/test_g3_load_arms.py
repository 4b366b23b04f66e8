"""G3 concurrency levels: a load's evidence, the level summaries and the cache-hit measurement."""

from __future__ import annotations

from typing import Any

from kvgate.orchestration.g3.load_arms import LoadTrial, load_trial, output_mismatches, summaries
from kvgate.orchestration.g3.verdicts import cache_hits_measurement


class FakeBracket:  # the counters a real Bracket read around the load
    def __init__(self, hits: int | None, dev: int | None = 0, server_ttft: float | None = None) -> None:
        self.hit_tokens, self.device_read_bytes, self.server_ttft_mean_s = hits, dev, server_ttft


def doc(ttft_ms: float, tput: float, *, n: int = 8, failed: int = 0, texts: str = "ab") -> dict[str, Any]:
    summary = {
        "completed": n - failed,
        "failed": failed,
        "total_input_tokens": 2048 * (n - failed),
        "p50_ttft_ms": ttft_ms,
        "p90_ttft_ms": ttft_ms * 2,
        "p99_ttft_ms": ttft_ms * 3,
        "p50_e2el_ms": ttft_ms * 4,
        "output_throughput_tok_per_s": tput,
    }
    records = [{"index": i, "success": i >= failed, "text": texts} for i in range(n)]
    return {"summary": summary, "records": records, "workload_invalid_reason": None}


def trial(arm: str, c: int, i: int, d: dict[str, Any], hits: int | None) -> LoadTrial:
    return load_trial(arm, c, i, f"s{i}", doc=d, bracket=FakeBracket(hits), min_hit=0.9)  # type: ignore[arg-type]


def test_levels_are_summarised_per_arm_and_concurrency_as_medians_over_trials() -> None:
    rc = [
        trial("recompute", 8, i, doc(t, p), 0) for i, (t, p) in enumerate([(700, 70), (800, 75), (900, 90)])
    ]
    warm = [
        trial("warm", 8, i, doc(t, p), 15_000) for i, (t, p) in enumerate([(100, 400), (110, 430), (90, 420)])
    ]
    s = summaries({"recompute": rc, "warm": warm})
    assert sorted(s) == ["recompute@c8", "warm@c8"]
    assert s["recompute@c8"].arm == "recompute@c8"
    assert (s["recompute@c8"].ttft_p50_s, s["recompute@c8"].output_throughput_tok_per_s) == (0.8, 75)
    assert (s["warm@c8"].completed, s["warm@c8"].trials, s["warm@c8"].prompt_tokens_p50) == (3, 3, 2048)
    assert s["warm@c8"].invalid_reasons == []


def test_a_cache_arm_without_hits_and_a_recompute_with_hits_are_not_trusted() -> None:
    cold = trial("warm", 16, 0, doc(100, 400, n=16), 512)  # 512 of 32768 prompt tokens from cache
    assert cold.invalid_reason is not None
    assert "not a cache hit" in cold.invalid_reason
    hot = trial("recompute", 16, 0, doc(800, 80, n=16), 4096)
    assert hot.invalid_reason is not None
    assert "not a recompute" in hot.invalid_reason
    m = cache_hits_measurement({"warm": [cold], "recompute": [hot]})
    assert m.value == 512 / 32768
    assert m.invalid_reason is not None
    assert "recompute@c16 trial 0: 4096" in m.invalid_reason


def test_unknown_hits_leave_the_cache_claim_unproven() -> None:
    m = cache_hits_measurement({"warm": [trial("warm", 8, 0, doc(100, 400), None)]})
    assert m.value is None
    assert m.invalid_reason == "warm@c8 trial 0: hit counter or prompt tokens unknown"


def test_failed_requests_are_reasons_and_do_not_count_as_completed_trials() -> None:
    t = trial("warm", 8, 0, doc(100, 400, failed=2), 14_000)
    assert t.invalid_reason is not None
    assert "2 of 8 requests failed" in t.invalid_reason
    assert summaries({"warm": [t]})["warm@c8"].completed == 0


def test_outputs_served_from_cache_must_equal_recompute_for_the_same_prompt() -> None:
    rc = trial("recompute", 8, 0, doc(800, 80), 0)
    same = trial("warm", 8, 0, doc(100, 400), 15_000)
    other = trial("ssd-restore", 8, 0, doc(100, 400, texts="zz"), 15_000)
    assert output_mismatches({"recompute": [rc], "warm": [same]}) == ([], [])
    found, ties = output_mismatches({"recompute": [rc], "ssd-restore": [other]})
    assert len(found) == 8
    assert ties == []  # without logprobs a difference cannot be shown to be a near-tie
    assert found[0].startswith("ssd-restore@c8 trial 0 prompt 0: expected 'ab', got 'zz' — logprobs were not")


def test_the_engines_own_ttft_is_summarised_beside_the_clients() -> None:
    loads = []
    for i, (client_ms, server_s) in enumerate([(120.0, 0.100), (130.0, 0.110), (400.0, 0.105)]):
        d = doc(client_ms, 50)
        d["summary"]["mean_ttft_ms"] = client_ms
        loads.append(
            load_trial("warm", 8, i, f"s{i}", doc=d, bracket=FakeBracket(16_384, 0, server_s), min_hit=0.9)
        )
    s = summaries({"warm": loads})["warm@c8"]
    assert (s.ttft_mean_s, s.server_ttft_mean_s) == (0.13, 0.105)  # medians over the loads
    assert (
        summaries({"warm": [trial("warm", 8, 0, doc(100, 400), 16_384)]})["warm@c8"].server_ttft_mean_s
        is None
    )
