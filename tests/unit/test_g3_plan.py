"""G3 plan and verdicts: evidence checks, reference judging, what is not evaluable, inventory rules."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError

from kvgate.base.criteria import Inputs, Judgement, Measurement, Verdict
from kvgate.configuration.gate_profiles.g3 import ColdBounds, VerdictBinding, WriteThrough, load_g3_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.configuration.references import load_references
from kvgate.judgement import Bound, Check
from kvgate.orchestration.g3.arms import ArmFigures, Outcome, Trial, Window
from kvgate.orchestration.g3.plan import G3Check, plan
from kvgate.orchestration.g3.verdicts import (
    cold_proof_measurement,
    correctness_measurement,
    reference_measurement,
    reference_measurements,
    write_through_measurement,
)

MB = 1_000_000


def inventory(scale: str = "smoke", **engine: Any) -> Inventory:
    dep = {
        "tier_profile": "llama-cpp-disk",
        "recompute_profile": "llama-cpp-recompute",
        "volume": "v",
    } | engine
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": scale,
            "hosts": {"h": {"roles": ["engine", "storage-client"]}, "c": {"roles": ["control"]}},
            "volumes": {
                "v": {"path": "/mnt/v", "kind": "candidate", "scratch": True},
                "nvme": {"path": "/srv/kv", "kind": "baseline", "scratch": True},  # the seed's local NVMe
            },
            "engines": {"tiny": dep},
        }
    )


NVME = {"baseline_volume": "nvme"}  # R2/R3: the tier on local NVMe against the candidate


LMCACHE = {"tier_profile": "vllm-lmcache", "recompute_profile": "vllm-recompute"}  # batches requests


def checks(inv: Inventory) -> dict[str, G3Check]:
    return {c.check: c for c in plan(in_memory(inv))}


def comparable(check: G3Check) -> G3Check:
    """The check as a profile whose volume arms are the seed's would plan it (smoke's never are)."""
    assert check.bound is not None
    return replace(check, bound=replace(check.bound, comparable=True))


def arm(
    name: str, ttft: float | None, *, cv: float = 0.05, reasons: tuple[str, ...] = (), **figures: Any
) -> ArmFigures:
    """An arm of three trials at ``ttft`` (its percentiles too); ``figures`` set the rest, else unmeasured."""
    measured = {
        "arm": name,
        "trials": 3,
        "completed": 3 if ttft else 0,
        "ttft_p50_s": ttft,
        "ttft_p90_s": ttft,
        "ttft_p99_s": ttft,
        "ttft_cv": cv,
        "e2e_p50_s": ttft,
        "output_throughput_tok_per_s": 10.0,
        "prompt_tokens_p50": 1000,
        "invalid_reasons": list(reasons),
        "qualifications": [],
    }
    return ArmFigures(**dict.fromkeys(ArmFigures.model_fields) | measured | figures)


def test_every_engine_host_gets_evidence_checks_and_one_check_per_profile_verdict() -> None:
    found = checks(inventory())
    assert {c.host for c in found.values()} == {"h"}  # only the engine-role host
    assert list(found)[:3] == [
        "engine[tiny].ssd-restore.write-through",
        "engine[tiny].ssd-restore.cold-proof",
        "engine[tiny].ssd-restore.correctness",
    ]
    assert len(found) == 3 + len(load_g3_profile("smoke").verdicts)
    assert found["engine[tiny].ttft-p50-reduction"].criterion.rule == "R2-ttft-p50-tp8"


def volume_arms(
    levels: dict[int, tuple[float, float]], *, whole: bool = False, **fields: Any
) -> dict[str, ArmFigures]:
    """baseline-volume@c<C> and candidate-volume@c<C>: level → (baseline TTFT, candidate TTFT)."""
    out, tail = {}, "-whole" if whole else ""
    for c, (base, cand) in levels.items():
        out[f"baseline-volume{tail}@c{c}"] = arm(f"baseline-volume{tail}@c{c}", base, **fields)
        out[f"candidate-volume{tail}@c{c}"] = arm(f"candidate-volume{tail}@c{c}", cand, **fields)
    return out


def judged(check: G3Check, arms: dict[str, ArmFigures]) -> Judgement:
    assert check.spec is not None
    ref = load_references().get(check.spec.reference)
    return check.evaluate(Inputs(reference_measurements(ref, check.spec, arms, max_cv=0.5)))


def test_r2_ttft_is_judged_candidate_volume_against_baseline_volume_the_least_reduction_counts() -> None:
    smoke = checks(inventory(**NVME))["engine[tiny].ttft-p50-reduction"]
    assert smoke.spec is not None
    assert (smoke.spec.baseline_arm, smoke.spec.candidate_arm) == ("baseline-volume", "candidate-volume")
    assert smoke.ruled is None  # llama.cpp's ssd-tier runs on both volumes: measured, not skipped
    seeds = volume_arms({4: (10.17, 7.53), 8: (20.0, 13.6), 16: (35.73, 26.35)})  # R2's own figures
    shown = judged(smoke, seeds)  # at smoke scale never compared, wherever the figure lands
    assert shown.verdict is Verdict.SKIP
    assert "not comparable: ttft-p50-reduction@c4 ↓26.0%; " in shown.condition
    assert "inside the seed's" not in shown.condition  # not placed against the range it is not held to
    assert "at smoke scale the figure is not the seed's kind of figure, whatever its size" in shown.condition
    check = comparable(smoke)
    j = judged(check, seeds)
    assert j.verdict is Verdict.PASS
    assert j.condition.startswith(
        "ttft_p50_reduction_pct=25.96 ≥ 25.5 (R2: ↓26–32%) — per level c4 ↓26.0%, "
        "c8 ↓32.0%, c16 ↓26.3% (the least is judged); inside the seed's ↓26–32%"
    )
    assert "llama-cpp-disk-keep's tier on baseline volume nvme vs the candidate, one engine" in j.condition
    assert "16 sessions of 1024 tokens populated" in j.condition
    assert "a wave queues alike on both volumes" in j.condition  # llama.cpp serves one at a time
    one_slow = volume_arms({4: (10.0, 7.0), 8: (10.0, 7.0), 16: (10.0, 9.0)})  # c16: ↓10 %
    j = judged(check, one_slow)
    assert j.verdict is Verdict.FAIL
    assert "c16 ↓10.0%" in j.condition
    assert "below the seed's ↓26–32%" in j.condition


def test_r2_without_a_baseline_volume_is_declared_not_a_dram_only_comparison() -> None:
    j = checks(inventory())["engine[tiny].ttft-p50-reduction"].evaluate()
    assert j.verdict is Verdict.SKIP
    assert "names no baseline volume for its KV tier (engines.<name>.baseline_volume)" in j.condition
    full = checks(inventory("full"))["engine[tiny].ttft-p50-reduction"].evaluate()
    assert full.verdict is Verdict.INVALID


def test_a_gain_far_above_the_seeds_range_is_not_a_pass_invalid_at_full_scale_said_at_smoke() -> None:
    far = volume_arms({4: (10.0, 2.0), 8: (10.0, 7.0), 16: (10.0, 7.0)})  # c4 ↓80 %: 3.4× R2's upper end
    smoke = judged(checks(inventory(**NVME))["engine[tiny].ttft-p50-reduction"], far)
    assert smoke.verdict is Verdict.SKIP
    assert "not comparable: ttft-p50-reduction@c4 ↓80.0%: far above the seed's ↓26–32%" in smoke.condition
    assert "at smoke scale the figure is not the seed's kind of figure, whatever its size" in smoke.condition
    lab = checks(inventory("full", **NVME, **LMCACHE, **LAB))["engine[tiny].ttft-p50-reduction"]
    full = judged(lab, volume_arms({8: (10.0, 2.0), 16: (10.0, 7.0), 32: (10.0, 7.0)}))
    assert full.verdict is Verdict.INVALID
    assert "(3.4× the speed-up at its upper end)" in full.condition
    assert "this site's baseline volume, engine or load is not the seed's" in full.condition
    inside = volume_arms({8: (10.17, 7.53), 16: (17.31, 11.85), 32: (35.73, 26.35)})  # R2's own table
    assert judged(lab, inside).verdict is Verdict.PASS


def test_a_site_threshold_fraction_scales_the_lower_bound_and_shows_in_the_condition() -> None:
    ref = load_references().get("R2-recompute-ttft-p50-conc16")
    b = VerdictBinding(
        check="x",
        reference=ref.id,
        statistic="ttft_p50_s",
        baseline_arm="recompute",
        candidate_arm="ssd-restore",
        threshold_fraction=0.5,
    )
    bound = Bound(ref, threshold_fraction=0.5)
    check = Check(host="h", check="engine[tiny].x", criterion=bound.criterion(), spec=b, key="x", bound=bound)
    arms = {"recompute": arm("recompute", 5.0), "ssd-restore": arm("ssd-restore", 1.0)}
    j = check.evaluate(Inputs({"x": reference_measurement(ref, b, arms, max_cv=0.5)}))
    assert j.verdict is Verdict.PASS
    assert j.condition == "ttft_p50_speedup_x=5 ≥ 4.275 (0.5 × R2: 8.6–20×) — below the seed's 8.6–20×"


def test_an_untrusted_arm_makes_the_reference_verdict_invalid_never_pass() -> None:
    check = checks(inventory(**NVME))["engine[tiny].ttft-p50-reduction"]
    good = volume_arms(dict.fromkeys((4, 8, 16), (2.0, 1.4)))
    cold = good["candidate-volume@c8"].model_copy(update={"invalid_reasons": ["trial 0: not cold"]})
    j = judged(check, {**good, "candidate-volume@c8": cold})
    assert j.verdict is Verdict.INVALID
    assert "c8: candidate-volume@c8 trial 0: not cold" in j.condition
    noisy = {**good, "baseline-volume@c4": good["baseline-volume@c4"].model_copy(update={"ttft_cv": 0.9})}
    j = judged(check, noisy)
    assert j.verdict is Verdict.INVALID
    assert "baseline-volume@c4 TTFT CV 0.90 > 0.5" in j.condition
    missing = {k: v for k, v in good.items() if k != "candidate-volume@c16"}
    j = judged(check, missing)
    assert j.verdict is Verdict.INVALID
    assert "arm candidate-volume@c16: no successful request" in j.condition
    assert check.evaluate().verdict is Verdict.INVALID  # not measured at all


def test_a_one_request_engine_runs_the_volume_waves_but_not_their_throughput() -> None:
    found = checks(inventory(**NVME))
    for name in ("recompute-ttft-speedup", "recompute-throughput-speedup"):
        j = found[f"engine[tiny].{name}"].evaluate()
        assert j.verdict is Verdict.SKIP, name
        assert "serves one request at a time, so 16 requests at once would only queue" in j.condition
    assert found["engine[tiny].ttft-p50-reduction"].ruled is None  # TTFT: queued alike on both volumes
    for level in ("conc8", "conc16"):  # the seed's throughput at C is of batched serving
        j = found[f"engine[tiny].throughput-gain-{level}"].evaluate()
        assert j.verdict is Verdict.SKIP
        assert "serves one request at a time: the seed's waves of N sessions were batched" in j.condition
    for r1 in ("cold-read-ttft-speedup", "cold-read-bw-gain"):  # no readers named: declared SKIP
        j = found[f"engine[tiny].{r1}"].evaluate()
        assert j.verdict is Verdict.SKIP
        assert "names no serial and parallel reader" in j.condition


def test_the_full_profile_makes_unevaluable_reference_checks_invalid() -> None:
    j = checks(inventory("full"))["engine[tiny].recompute-throughput-speedup"].evaluate()
    assert j.verdict is Verdict.INVALID
    assert "not evaluable" in j.condition
    lab = checks(
        inventory("full", tier_profile="vllm-cpu-prefix", recompute_profile="vllm-cpu-recompute", **NVME)
    )
    j = lab["engine[tiny].throughput-gain-conc8"].evaluate()
    assert j.verdict is Verdict.INVALID  # no SSD tier: nothing to put on either volume
    assert "has no external KV tier to put on the baseline and candidate volume" in j.condition


def test_a_concurrent_engine_judges_recompute_at_conc16_and_capacity_at_its_levels() -> None:
    found = checks(
        inventory(
            tier_profile="vllm-lmcache",
            recompute_profile="vllm-cpu-recompute",
            model="/models/m.safetensors",
            state_bytes_per_token=262144,
            **NVME,
        )
    )
    speedup, conc16 = (
        found["engine[tiny].recompute-ttft-speedup"],
        found["engine[tiny].throughput-gain-conc16"],
    )
    assert speedup.ruled is None
    assert conc16.ruled is None
    assert "engine[tiny].ssd-restore.cache-hits" in found  # the hit counter is judged under load
    assert conc16.evaluate().verdict is Verdict.INVALID  # planned but not measured: never PASS
    arms = {
        "recompute@c16": arm("recompute@c16", 149.5),
        "ssd-restore@c16": arm("ssd-restore@c16", 11.85),
        "recompute": arm("recompute", 2.0),
        "ssd-restore": arm("ssd-restore", 1.0),
    }
    j = judged(speedup, arms)
    assert j.verdict is Verdict.PASS  # from the conc-16 loads (12.6×), not the single prompts (2×)
    assert j.condition.startswith("ttft_p50_speedup_x=12.62 ≥ 8.55 (R2: 8.6–20×)")
    tput = {
        "baseline-volume@c16": arm("baseline-volume@c16", 2.0, output_throughput_tok_per_s=100.0),
        "candidate-volume@c16": arm("candidate-volume@c16", 1.0, output_throughput_tok_per_s=150.0),
    }
    j = judged(conc16, tput)
    assert j.verdict is Verdict.PASS  # +50 % ≥ +40 %
    assert "above the seed's +40%" in j.condition
    assert found["engine[tiny].recompute-ttft-speedup"].note == ""


def test_a_deployment_without_an_external_tier_measures_warm_only() -> None:
    found = checks(inventory(tier_profile="vllm-cpu-prefix", recompute_profile="vllm-cpu-recompute"))
    assert {"engine[tiny].warm.correctness", "engine[tiny].warm.cache-hits"} <= set(found)
    # correctness is judged on every engine (exact, or a near-tie by the logprobs)
    assert found["engine[tiny].warm.correctness"].ruled is None
    assert "check_logprobs_close" in found["engine[tiny].warm.correctness"].criterion.source
    for name in ("warm.write-through", "warm.cold-proof", "ttft-p50-reduction", "throughput-gain-conc8"):
        j = found[f"engine[tiny].{name}"].evaluate()
        assert j.verdict is Verdict.SKIP, name  # smoke declares why
        assert "has no external KV tier" in j.condition
    full = checks(inventory("full", tier_profile="vllm-cpu-prefix", recompute_profile="vllm-cpu-recompute"))
    assert full["engine[tiny].throughput-gain-conc8"].evaluate().verdict is Verdict.INVALID


def test_no_engine_deployment_is_an_invalid_gate_not_an_empty_pass() -> None:
    inv = inventory().model_copy(update={"engines": {}})
    (only,) = plan(in_memory(inv))
    j = only.evaluate()
    assert (only.host, j.verdict) == ("cluster", Verdict.INVALID)
    assert "declares no engine deployment" in j.condition


def test_evidence_measurements_turn_counters_into_verdicts_with_numbers() -> None:
    found = checks(inventory())
    w = Window(
        "vda", device_read_bytes=60 * MB, engine_read_bytes=55 * MB, hit_tokens=999, caches_dropped=True
    )
    good = Trial("ssd-restore", 0, "s", Outcome(0.1, 0.2, "t"), 1000, w, 50 * MB, 51 * MB, 1.2)
    bad = Trial(
        "ssd-restore",
        1,
        "s1",
        Outcome(0.1, 0.2, "t"),
        1000,
        Window("vda", 2 * MB, 55 * MB, 999, True),
        50 * MB,
        1 * MB,
        1.2,
    )
    cold = found["engine[tiny].ssd-restore.cold-proof"]
    assert (
        cold.evaluate(Inputs({"cold-proof": cold_proof_measurement([good], ColdBounds())})).verdict
        is Verdict.PASS
    )
    j = cold.evaluate(Inputs({"cold-proof": cold_proof_measurement([good, bad], ColdBounds())}))
    assert j.verdict is Verdict.INVALID
    assert "trial 1: not cold: vda read 2000000 B of the 50000000 B the restore needed" in j.condition
    wrote = found["engine[tiny].ssd-restore.write-through"]
    j = wrote.evaluate(Inputs({"write-through": write_through_measurement([good, bad], WriteThrough())}))
    assert j.verdict is Verdict.FAIL
    assert j.condition.startswith("cache_growth_ratio=0.02 x ≥ 0.9 x")


def test_an_output_mismatch_fails_correctness_and_shows_the_texts() -> None:
    check = checks(inventory())["engine[tiny].ssd-restore.correctness"]
    m = correctness_measurement(["ssd-restore s0: expected 'a', got 'b'"], compared=6)
    j = check.evaluate(
        Inputs({"correctness": m}, detail="first mismatch: ssd-restore s0: expected 'a', got 'b'")
    )
    assert j.verdict is Verdict.FAIL
    assert "got 'b'" in j.condition
    assert check.evaluate(Inputs({"correctness": correctness_measurement([], 6)})).verdict is Verdict.PASS
    nothing = check.evaluate(Inputs({"correctness": correctness_measurement([], 0)}))
    assert nothing.verdict is Verdict.INVALID


@pytest.mark.parametrize(
    ("engine", "message"),
    [
        ({"volume": "nope"}, "volume 'nope' is not defined"),
        ({"model": "/models/x.gguf"}, "state_bytes_per_token is required"),
        ({"hosts": ["ghost"]}, "host 'ghost' is not defined"),
    ],
)
def test_the_inventory_refuses_an_engine_deployment_it_cannot_run(
    engine: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        inventory(**engine)


def test_the_tier_must_live_on_a_scratch_candidate_volume() -> None:
    data = inventory().model_dump()
    data["volumes"]["v"]["scratch"] = False
    with pytest.raises(ValidationError, match="not scratch"):
        Inventory.model_validate(data)
    data["volumes"]["v"] |= {"scratch": True, "kind": "baseline"}
    with pytest.raises(ValidationError, match="not a candidate"):
        Inventory.model_validate(data)


def test_measurement_metric_must_match_the_reference() -> None:
    check = checks(inventory(**NVME))["engine[tiny].ttft-p50-reduction"]
    with pytest.raises(ValueError, match="judges 'ttft_p50_reduction_pct'"):
        check.evaluate(Inputs({"ttft-p50-reduction": Measurement("other", 1.0)}))


def test_the_whole_machine_binding_needs_two_instances_and_is_declared_otherwise() -> None:
    one = checks(inventory(**NVME))["engine[tiny].throughput-gain-whole-machine"].evaluate()
    assert one.verdict is Verdict.SKIP
    assert "one engine instance per host" in one.condition
    two = checks(inventory(instances=2, **LMCACHE, **NVME))["engine[tiny].throughput-gain-whole-machine"]
    assert two.ruled is None
    assert "2 engine instances together" in two.note
    full = checks(inventory("full", **NVME))["engine[tiny].throughput-gain-whole-machine"].evaluate()
    assert full.verdict is Verdict.INVALID  # a lab gate must measure it
    llama = checks(inventory(instances=2, **NVME))["engine[tiny].throughput-gain-whole-machine"].evaluate()
    assert llama.verdict is Verdict.SKIP  # one turn at a time per instance: not the seed's batched gain
    assert "serves one request at a time" in llama.condition


def test_the_whole_machine_gain_is_judged_on_both_volumes_whole_rows_at_r3s_levels() -> None:
    check = comparable(
        checks(inventory(instances=2, **LMCACHE, **NVME))["engine[tiny].throughput-gain-whole-machine"]
    )
    assert check.spec is not None
    assert (check.spec.baseline_arm, check.spec.levels) == ("baseline-volume-whole", (8, 16))
    rows = volume_arms({8: (5.0, 0.5), 16: (5.0, 0.5)}, whole=True, output_throughput_tok_per_s=10.0)
    for c, tput in ((8, 13.6), (16, 13.6)):  # +36 %
        rows[f"candidate-volume-whole@c{c}"] = arm(f"x@c{c}", 0.5, output_throughput_tok_per_s=tput)
    assert judged(check, rows).verdict is Verdict.PASS
    rows["candidate-volume-whole@c16"] = rows["candidate-volume-whole@c16"].model_copy(
        update={"output_throughput_tok_per_s": 12.0}
    )
    assert judged(check, rows).verdict is Verdict.FAIL  # +20 % at whole-machine 16
    assert "2 engine instances together" in check.note


def test_instances_give_one_environment_each_and_bad_ones_are_refused() -> None:
    envs = [{"CUDA_VISIBLE_DEVICES": "0,1,2,3"}, {"CUDA_VISIBLE_DEVICES": "4,5,6,7"}]
    assert inventory(instances=envs).engines["tiny"].instance_envs == tuple(envs)
    assert inventory(instances=3).engines["tiny"].instance_envs == ({}, {}, {})
    for bad in (0, 65):
        with pytest.raises(ValidationError, match=r"a count of engine instances is 1\.\.64"):
            inventory(instances=bad)
    with pytest.raises(ValidationError, match="at least 1 item"):
        inventory(instances=[])
    with pytest.raises(ValidationError, match="past 65535"):
        inventory(instances=2, port=65533)


LAB = {"model": "/models/m.safetensors", "state_bytes_per_token": 262144}
READERS = {"serial": "vllm-lmcache-serial-read", "parallel": "vllm-lmcache"}


def test_named_readers_make_r1_measurable_and_judged_on_both_statistics() -> None:
    found = checks(
        inventory(tier_profile="vllm-lmcache", recompute_profile="vllm-recompute", cold_read=READERS, **LAB)
    )
    ttft, bw = found["engine[tiny].cold-read-ttft-speedup"], found["engine[tiny].cold-read-bw-gain"]
    assert ttft.ruled is bw.ruled is None
    assert "restored cold by vllm-lmcache-serial-read vs vllm-lmcache" in ttft.note
    assert ttft.evaluate().verdict is Verdict.INVALID  # planned but not measured: never PASS
    serial = arm("serial-read@c4", 37.97, read_bw_gb_per_s=0.98)  # R1's own figures
    parallel = arm("parallel-read@c4", 9.3, read_bw_gb_per_s=5.23)
    arms = {"serial-read@c4": serial, "parallel-read@c4": parallel}
    refs, smoke = load_references(), load_g3_profile("smoke")
    m_ttft = reference_measurement(refs.get("R1-cold-read-ttft-conc16"), ttft.spec, arms, max_cv=None)
    m_bw = reference_measurement(refs.get("R1-cold-read-bw-conc16"), bw.spec, arms, max_cv=None)
    assert ttft.spec == smoke.verdict("cold-read-ttft-speedup")
    assert m_ttft.value == pytest.approx(37.97 / 9.3)
    assert m_bw.value == pytest.approx(5.23 / 0.98)
    assert ttft.evaluate(Inputs({"cold-read-ttft-speedup": m_ttft})).verdict is Verdict.PASS  # 4.08×: "4.1×"
    slow = {**arms, "serial-read@c4": serial.model_copy(update={"ttft_p50_s": 37.0})}  # 3.98×: not 4.1×
    m_slow = reference_measurement(refs.get("R1-cold-read-ttft-conc16"), ttft.spec, slow, max_cv=None)
    assert ttft.evaluate(Inputs({"cold-read-ttft-speedup": m_slow})).verdict is Verdict.FAIL
    assert bw.evaluate(Inputs({"cold-read-bw-gain": m_bw})).verdict is Verdict.PASS  # 5.34× ≥ 5.3×
    same = {k: a.model_copy(update={"read_bw_gb_per_s": 1.0}) for k, a in arms.items()}
    m_same = reference_measurement(refs.get("R1-cold-read-bw-conc16"), bw.spec, same, max_cv=None)
    assert bw.evaluate(Inputs({"cold-read-bw-gain": m_same})).verdict is Verdict.FAIL


def test_r1_without_readers_is_invalid_at_full_scale_and_a_reader_without_a_tier_is_invalid() -> None:
    full = checks(inventory("full", tier_profile="vllm-lmcache", recompute_profile="vllm-recompute", **LAB))
    j = full["engine[tiny].cold-read-bw-gain"].evaluate()
    assert j.verdict is Verdict.INVALID
    assert "engines.<x>.cold_read" in j.condition
    no_tier = {"serial": "vllm-recompute", "parallel": "vllm-lmcache"}
    found = checks(
        inventory(tier_profile="vllm-lmcache", recompute_profile="vllm-recompute", cold_read=no_tier, **LAB)
    )
    j = found["engine[tiny].cold-read-ttft-speedup"].evaluate()
    assert j.verdict is Verdict.INVALID
    assert "without an external KV tier: vllm-recompute" in j.condition
    llama = {"serial": "llama-cpp-disk", "parallel": "llama-cpp-disk"}
    j = checks(inventory(cold_read=llama))["engine[tiny].cold-read-bw-gain"].evaluate()
    assert j.verdict is Verdict.INVALID  # named but not comparable: never a quiet SKIP
    assert "llama-cpp-disk serve(s) one request at a time" in j.condition


def test_cold_read_bindings_are_validated_against_the_profile() -> None:
    base = {"check": "x", "reference": "R1-cold-read-ttft-conc16", "statistic": "ttft_p50_s"}
    with pytest.raises(ValidationError, match="baseline serial-read with candidate parallel-read"):
        VerdictBinding.model_validate(base | {"baseline_arm": "recompute", "candidate_arm": "parallel-read"})
    with pytest.raises(ValidationError, match="cold-read arms only"):
        VerdictBinding.model_validate(
            base
            | {"statistic": "read_bw_gb_per_s", "baseline_arm": "recompute", "candidate_arm": "ssd-restore"}
        )
    smoke = load_g3_profile("smoke").model_dump()
    smoke["cold_read"]["concurrency"] = 16
    with pytest.raises(ValidationError, match=r"concurrency 4 is not cold_read\.concurrency 16"):
        type(load_g3_profile("smoke")).model_validate(smoke)


def test_r1_readers_with_tensor_parallelism_are_several_readers_and_not_evaluable() -> None:
    lab = {"tier_profile": "vllm-lmcache", "recompute_profile": "vllm-recompute", **LAB}
    one_card = checks(inventory(cold_read=READERS, engine_args=["--tensor-parallel-size", "4"], **lab))
    assert one_card["engine[tiny].cold-read-bw-gain"].ruled is None  # the deployment's TP4 stays out
    placed = READERS | {"placement": {"engine_args": ["--tensor-parallel-size", "4"]}}
    j = checks(inventory(cold_read=placed, **lab))["engine[tiny].cold-read-ttft-speedup"].evaluate()
    assert j.verdict is Verdict.INVALID
    assert "the readers run at tensor parallelism 4 (cold_read.placement.engine_args)" in j.condition
    assert "R1 ran on one card (TP 1)" in j.condition


def test_r1_readers_on_their_own_model_need_its_state_size() -> None:
    own = READERS | {"model": "/models/Qwen2.5-32B-Instruct"}
    with pytest.raises(
        ValidationError, match="state_bytes_per_token is required with the readers' own model"
    ):
        inventory(tier_profile="vllm-lmcache", recompute_profile="vllm-recompute", cold_read=own, **LAB)
