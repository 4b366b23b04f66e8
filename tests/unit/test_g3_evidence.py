"""G3 evidence decisions: cold proof, write-through, workload shape, output equality, arm statistics."""

from __future__ import annotations

import pytest

from kvgate.configuration.gate_profiles.g3 import ColdBounds, WriteThrough
from kvgate.orchestration.g3.arms import Outcome, Trial, Window, cv, summarize
from kvgate.orchestration.g3.evidence import shape_reason, write_through_reason
from kvgate.orchestration.g3.window import restore_reason
from kvgate.probes.evidence.window import Counts
from kvgate.probes.loadgen.outputs import Comparison, Output, compare_outputs
from kvgate.probes.loadgen.record import TokenLogprob

MB = 1_000_000


def cold(
    *,
    device_read_bytes: int | None = 52 * MB,
    engine_read_bytes: int | None = 51 * MB,
    hit_tokens: int | None = 999,
    caches_dropped: bool = True,
) -> str | None:
    counts = Counts(device_read_bytes, 0, engine_read_bytes, counted_on="vda")
    return restore_reason(
        ColdBounds(),
        counts,
        predicted_bytes=50 * MB,
        prompt_tokens=1000,
        hit_tokens=hit_tokens,
        caches_dropped=caches_dropped,
    )


def test_a_restore_read_from_the_device_by_the_engine_with_every_token_restored_is_cold() -> None:
    assert cold() is None


def test_device_bytes_far_below_the_prediction_mean_the_ssd_did_not_serve_the_restore() -> None:
    why = cold(device_read_bytes=3 * MB)
    assert why == "not cold: vda read 3000000 B of the 50000000 B the restore needed (6% < 90%)"


def test_the_engine_process_must_have_read_the_state_itself() -> None:
    why = cold(engine_read_bytes=0)
    assert why is not None
    assert "the engine read 0 B from storage of the 50000000 B the restore needed" in why


def test_a_hit_on_a_wrong_entry_is_caught_by_the_engines_restored_token_count() -> None:
    # llama-cpp-python loads the best prefix match even when only BOS matches, then recomputes:
    # the bytes were read, but only one token was restored.
    why = cold(hit_tokens=1)
    assert why is not None
    assert "restored 1 of 1000 prompt tokens" in why
    assert "recomputed" in why


def test_no_cache_drop_or_no_block_device_cannot_prove_cold() -> None:
    assert "page cache not dropped" in (cold(caches_dropped=False) or "")
    assert "nothing can prove the restore cold" in (cold(device_read_bytes=None) or "")


def test_an_unknown_hit_count_leaves_the_decision_to_the_byte_counters() -> None:
    assert cold(hit_tokens=None) is None


@pytest.mark.parametrize(
    ("growth", "expected"),
    [
        (50 * MB, None),
        (
            10 * MB,
            "no write-through: the tier directory grew 10000000 B for 50000000 B predicted (20% < 90%)",
        ),
        (150 * MB, "the tier directory grew 150000000 B for 50000000 B predicted (300% > 200%): something"),
    ],
)
def test_write_through_is_the_tier_growth_against_the_models_state_bytes(
    growth: int, expected: str | None
) -> None:
    got = write_through_reason(WriteThrough(), growth_bytes=growth, predicted_bytes=50 * MB)
    assert got is None if expected is None else (got or "").startswith(expected)


def test_shape_needs_the_target_prompt_length_and_a_completion_that_ran_to_max_tokens() -> None:
    assert shape_reason(prompt_tokens=1040, target=1024, tolerance=0.05, finish_reason="length") is None
    off = shape_reason(prompt_tokens=1100, target=1024, tolerance=0.05, finish_reason="length")
    assert off == "prompt has 1100 tokens, target 1024 ±5%"
    early = shape_reason(prompt_tokens=None, target=1024, tolerance=0.05, finish_reason="stop")
    assert early == "prompt tokens not counted; completion ended by stop before max_tokens"


def test_restored_outputs_must_equal_recompute_for_the_same_salt() -> None:
    same = {"a": Output("x"), "b": Output("y")}
    assert compare_outputs(same, dict(same)) == Comparison(compared=2)  # "0 mismatches" says of how many
    found = compare_outputs({"a": Output("x")}, {"a": Output("x!"), "c": Output("z")})
    assert found.compared == 2
    assert found.mismatches == (
        "a: expected 'x', got 'x!' — logprobs were not recorded (recompute: 0 tokens, cached: 0 "
        "tokens): request them with logprobs=K",
        "c: no recompute output to compare with",
    )
    assert found.near_ties == ()


def test_a_flip_at_a_near_tie_is_tolerated_and_listed_but_a_flip_elsewhere_fails() -> None:
    rc = Output(
        " a b", (TokenLogprob(" a", -0.1, {" a": -0.1}), TokenLogprob(" b", -0.69, {" b": -0.69, " c": -0.7}))
    )
    tie = Output(
        " a c", (TokenLogprob(" a", -0.1, {" a": -0.1}), TokenLogprob(" c", -0.69, {" c": -0.69, " b": -0.7}))
    )
    far = Output(
        " a d", (TokenLogprob(" a", -0.1, {" a": -0.1}), TokenLogprob(" d", -0.5, {" d": -0.5, " e": -3}))
    )
    found = compare_outputs({"s": rc, "t": rc}, {"s": tie, "t": far}, got_name="ssd-restore")
    bad, ties = found.mismatches, found.near_ties
    assert len(ties) == 1
    assert ties[0].startswith("s: expected ' a b', got ' a c' — near-tie at token 1: recompute ' b'")
    assert len(bad) == 1
    assert bad[0].startswith("t: expected ' a b', got ' a d' — not a near-tie: token 1")


def trial(i: int, ttft: float | None, *, error: str = "", reason: str | None = None) -> Trial:
    out = Outcome(ttft, None if ttft is None else ttft + 0.5, "t", error=error)
    w = Window("vda", 100 + i, 90 + i, 10, caches_dropped=True)
    return Trial("ssd-restore", i, f"s{i}", out, 1000, w, 95, 96, 1.5, reason)


def test_arm_summary_percentiles_are_numpy_linear_over_successful_trials_only() -> None:
    s = summarize(
        "ssd-restore",
        [trial(0, 0.1), trial(1, 0.3), trial(2, 0.2), trial(3, None, error="boom")],
        output_tokens=10,
    )
    assert (s.trials, s.completed) == (4, 3)
    assert s.ttft_p50_s == pytest.approx(0.2)
    assert s.ttft_p90_s == pytest.approx(0.28)  # numpy.percentile([.1, .2, .3], 90)
    assert s.e2e_p50_s == pytest.approx(0.7)
    assert s.output_throughput_tok_per_s == pytest.approx(10 / 0.7)
    assert s.device_read_bytes_p50 == pytest.approx(101.5)  # every window, including the failed request's
    assert s.invalid_reasons == ["trial 3: request failed: boom"]


def test_trial_reasons_reach_the_arm_and_cv_is_population_std_over_mean() -> None:
    s = summarize("ssd-restore", [trial(0, 1.0), trial(1, 3.0, reason="not cold")])
    assert s.invalid_reasons == ["trial 1: not cold"]
    assert s.ttft_cv == pytest.approx(0.5)
    assert cv([2.0]) is None  # one trial has no spread: shown as "—", never "0 %"
    assert cv([]) is None
