"""G3 concurrency levels: a load's evidence, the level summaries and the cache-hit measurement."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kvgate.configuration.gate_profiles import ClientBounds, load_g3_profile
from kvgate.orchestration.g3.load_arms import LoadTrial, Restore, load_trial, output_mismatches, summaries
from kvgate.orchestration.g3.verdicts import cache_hits_measurement
from kvgate.probes.evidence.window import Counts

NO_BOUNDS = ClientBounds()  # a client's health recorded, never judged


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
    bracket = FakeBracket(hits)
    return load_trial(arm, c, i, f"s{i}", doc=d, bracket=bracket, min_hit=0.9, client=NO_BOUNDS)


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
    assert output_mismatches({"recompute": [rc], "warm": [same]}).mismatches == ()
    compared = output_mismatches({"recompute": [rc], "ssd-restore": [other]})
    found = compared.mismatches
    assert len(found) == compared.compared == 8  # every one of the 8 differed
    assert compared.near_ties == ()  # without logprobs a difference cannot be shown to be a near-tie
    assert found[0].startswith("ssd-restore@c8 trial 0 prompt 0: expected 'ab', got 'zz' — logprobs were not")


def test_the_engines_own_ttft_is_summarised_beside_the_clients() -> None:
    loads = []
    for i, (client_ms, server_s) in enumerate([(120.0, 0.100), (130.0, 0.110), (400.0, 0.105)]):
        d = doc(client_ms, 50)
        d["summary"]["mean_ttft_ms"] = client_ms
        loads.append(
            load_trial(
                "warm",
                8,
                i,
                f"s{i}",
                doc=d,
                bracket=FakeBracket(16_384, 0, server_s),
                min_hit=0.9,
                client=ClientBounds(),
            )
        )
    s = summaries({"warm": loads})["warm@c8"]
    assert (s.ttft_mean_s, s.server_ttft_mean_s) == (0.13, 0.105)  # medians over the loads
    assert (
        summaries({"warm": [trial("warm", 8, 0, doc(100, 400), 16_384)]})["warm@c8"].server_ttft_mean_s
        is None
    )


class Window:  # what an EngineWindow read around a restore load
    def __init__(self, dev: int, eng: int, hits: int) -> None:
        self.counts = Counts(dev, 0, eng, counted_on="vda")
        self.hit_tokens = hits


def test_a_restore_load_is_proven_by_bytes_not_by_the_hit_counter_alone() -> None:
    smoke = load_g3_profile("smoke")
    populated = Restore.populated(doc(100, 10, n=16), state_bytes_per_token=1000)  # 16 × 2048 tokens
    assert populated.predicted_bytes == 16 * 2048 * 1000
    proof = replace(populated, dropped=True)
    full_hits = 16 * 2048
    assert proof.reason(smoke, Window(33_000_000, 33_000_000, full_hits)) is None  # type: ignore[arg-type]
    hits_only = proof.reason(smoke, Window(1_000_000, 33_000_000, full_hits))  # type: ignore[arg-type]
    assert hits_only is not None
    assert "not cold: vda read 1000000 B of the 32768000 B the restore needed" in hits_only
    undropped = replace(populated, dropped=False).reason(smoke, Window(33_000_000, 33_000_000, full_hits))  # type: ignore[arg-type]
    assert undropped is not None
    assert "page cache" in undropped
    unwritten = replace(proof, wrote="no write-through: the tier directory grew 0 B")
    assert "no write-through" in str(unwritten.reason(smoke, Window(33_000_000, 33_000_000, full_hits)))  # type: ignore[arg-type]
    unknown = Restore.populated({"summary": {}}, state_bytes_per_token=1000)
    assert "not proven cold by bytes" in str(unknown.reason(smoke, Window(1, 1, 1)))  # type: ignore[arg-type]


def test_a_load_whose_client_was_starved_is_not_trusted_under_the_profiles_bounds() -> None:
    starved = doc(200.0, 50.0) | {
        "client_health": {
            "loop_lag_ms": {"tick_ms": 5.0, "samples": 400, "p50": 0.2, "p99": 38.0, "max": 61.0},
            "bunched_token_share": 0.64,
            "bunched_below_ms": 0.1,
        }
    }
    full = load_g3_profile("full").client
    judged = load_trial("recompute", 8, 0, "s", doc=starved, bracket=FakeBracket(0), min_hit=0.9, client=full)
    assert judged.invalid_reason is not None
    assert "the client was starved: its event loop woke up to 38 ms late" in judged.invalid_reason
    assert "64% of its token stamps" in judged.invalid_reason
    smoke = load_g3_profile("smoke").client  # recorded, not judged: smoke proves the pipeline
    assert (
        load_trial(
            "recompute", 8, 0, "s", doc=starved, bracket=FakeBracket(0), min_hit=0.9, client=smoke
        ).invalid_reason
        is None
    )
