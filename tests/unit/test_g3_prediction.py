"""G3 held to the planner (issue 13 item 7): a restore faster than the storage can deliver is INVALID,
and the planner's numbers stand beside the arms' medians.

On main G3 had no storage bound: a restore served from the page cache with counters that
happened to move passed on its TTFT alone. Every test here fails there (no orchestration.g3.prediction).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g3.arms import Outcome, Trial, summarize
from kvgate.orchestration.g3.load_arms import LoadTrial
from kvgate.orchestration.g3.measure import DeploymentResult, add_predictions
from kvgate.orchestration.g3.prediction import StorageBound, too_fast
from kvgate.orchestration.g3.protocol import ArmsResult
from kvgate.orchestration.plan.inputs import Sourced, TierFigures
from kvgate.record.gate_rows import PredictionRow
from kvgate.report.g3_extra_tables import prediction_cells

GB = 1e9
BPT = 46708  # the tiny GGUF's state per token (KV + one f32 logits row)


def inventory() -> Inventory:
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": "smoke",
            "hosts": {"h": {"roles": ["engine", "storage-client"]}},
            "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}},
            "engines": {
                "tiny": {
                    "tier_profile": "llama-cpp-disk",
                    "recompute_profile": "llama-cpp-recompute",
                    "volume": "v",
                }
            },
        }
    )


def bound(*, measured: bool = True, best: float = 2 * GB) -> StorageBound:
    figures = TierFigures(Sourced(1.5 * GB, "G2 x"), Sourced(None, "unknown"), Sourced(best, "G2 x: best"))
    return StorageBound(in_memory(inventory()), "h", "tiny", figures, measured, BPT)


def restore(index: int, ttft_s: float, tokens: int = 2048) -> Trial:
    out = Outcome(ttft_s=ttft_s, e2e_s=ttft_s + 0.1, text="x")
    return Trial("ssd-restore", index, f"s{index}", out, tokens, predicted_bytes=tokens * BPT)


def load(ttft_done_s: float, tokens: int = 8 * 2048) -> LoadTrial:
    summary = {"completed": 8, "failed": 0, "total_input_tokens": tokens, "p50_ttft_ms": 100.0}
    return LoadTrial("ssd-restore", 8, 0, "s", summary, None, None, (), first_tokens_done_s=ttft_done_s)


def test_a_restore_is_too_fast_only_beyond_the_storages_best_plus_the_margin() -> None:
    assert too_fast(2.5 * GB, 1.0, best_bytes_per_s=2 * GB) is None  # 2.5 ≤ 2 × 1.25
    why = too_fast(2.6 * GB, 1.0, best_bytes_per_s=2 * GB)
    assert why is not None
    assert "2.6 GB/s" in why
    assert "something other than the SSD served it" in why


def test_restores_faster_than_g2_ever_read_are_invalid_in_the_arm_and_the_cold_proof() -> None:
    fast, fair = restore(0, 0.010), restore(1, 0.200)  # 95.7 MB in 10 ms (9.6 GB/s) vs 200 ms
    arms = ArmsResult(
        trials={"ssd-restore": [fast, fair]}, load_trials={"ssd-restore": [load(0.01), load(0.9)]}
    )
    held = bound().hold(arms)
    first, second = held.trials["ssd-restore"]
    assert first.invalid_reason is not None
    assert "more than the storage can deliver (G2 best 2 GB/s + 25%)" in first.invalid_reason
    assert second.invalid_reason is None
    assert (
        held.load_trials["ssd-restore"][0].invalid_reason is not None
    )  # 766 MB to the last first token in 10 ms
    assert held.load_trials["ssd-restore"][1].invalid_reason is None
    summary = summarize("ssd-restore", held.trials["ssd-restore"])
    assert summary.invalid_reasons == [f"trial 0: {first.invalid_reason}"]  # the R2 verdicts become INVALID
    reason = bound().held_cold(Measurement("restore_read_ratio", 1.0, "x"), held).invalid_reason
    assert reason is not None
    assert reason.startswith("trial 0: the restore moved 0.0957 GB in 0.01 s")


def test_an_assumed_storage_figure_never_invalidates_a_restore() -> None:
    arms = ArmsResult(trials={"ssd-restore": [restore(0, 0.001)]})
    assert bound(measured=False).hold(arms).trials["ssd-restore"][0].invalid_reason is None


def test_predicted_stands_beside_measured_for_every_g3_workload() -> None:
    result = DeploymentResult("h", "tiny", load_profile(PROFILE_DIR / "llama-cpp-disk.yaml"))
    rc = summarize("recompute", [Trial("recompute", 0, "s", Outcome(2.0, 2.5, "x"), 2048)], output_tokens=12)
    result.arms = {
        "recompute": rc,
        "ssd-restore": rc.model_copy(update={"arm": "ssd-restore", "ttft_p50_s": 0.2}),
    }
    predictions = bound().compare(result.arms)
    assert [p["concurrency"] for p in predictions] == [1]  # llama.cpp serves one request at a time
    (p,) = predictions
    assert p["recompute_ttft_s"] == [2.0, 2.0]  # the run's own prefill rate gives its own recompute back
    assert p["restore_ttft_s"][1] == 0.2
    assert p["restore_ttft_s"][0] == 2048 * BPT / 1.5e9  # one request may reach the whole ceiling
    (row,) = prediction_cells("h/tiny", stored(predictions))
    assert row[:3] == ["h/tiny", "one prompt", "2048"]
    assert row[3] == f"{2048 * BPT / 1.5e9:.3g} / 0.2 (3.1× the prediction)"  # the miss said beside it
    assert row[4] == "2 (the rate's source)"  # not "2.0 / 2.0": a calibration, not a prediction that held
    slow = [p | {"concurrency": 8, "recompute_ttft_s": [56_900.0, 1_355.2]}]  # a full-scale recompute, in s
    # before: 5.69e+04 / 1.36e+03
    assert prediction_cells("h/tiny", stored(slow))[0][4] == "56,900 / 1,355 (0.024× the prediction)"


def test_bound_from_a_results_root_without_g2_is_assumed_and_holds_nothing(tmp_path: Path) -> None:
    from kvgate.record.store import RunStore

    store = RunStore.create(tmp_path, site="s", gate="g3", meta={"inventory": {"path": "i", "sha256": "x"}})
    b = StorageBound.load(store, in_memory(inventory()), host="h", name="tiny")
    assert not b.measured
    assert b.bytes_per_token == BPT
    assert b.figures.ceiling.source.startswith("no usable G2 run")


def test_a_capacity_round_is_held_to_the_storage_by_its_documents_bytes() -> None:
    def round_(done_s: float) -> LoadTrial:
        summary = {"completed": 8, "failed": 0, "total_input_tokens": 8 * 2048, "p50_ttft_ms": 100.0}
        return LoadTrial(
            "ssd-tier",
            8,
            0,
            "s",
            summary,
            None,
            None,
            (),
            first_tokens_done_s=done_s,
            reusable_tokens=8 * 1024,
        )

    arms = ArmsResult(capacity_trials={"ssd-tier": [round_(0.1), round_(0.3)], "dram-only": [round_(0.1)]})
    held = bound().hold(arms).capacity_trials
    # 8 documents of 1024 tokens: 383 MB; in 0.1 s that is 3.8 GB/s (> 2 × 1.25), in 0.3 s 1.3 GB/s
    assert held["ssd-tier"][0].invalid_reason is not None
    assert "the restore moved 0.383 GB in 0.1 s" in held["ssd-tier"][0].invalid_reason
    assert held["ssd-tier"][1].invalid_reason is None  # its questions' tokens are not restored bytes
    assert held["dram-only"][0].invalid_reason is None  # no SSD tier: nothing to hold it to


def stored(predictions: list[dict[str, Any]]) -> list[PredictionRow]:
    """The predictions as run.json keeps them and reads them back."""
    return [PredictionRow.model_validate(json.loads(json.dumps(p))) for p in predictions]


def test_a_deployment_with_no_tier_on_the_storage_gets_no_restore_prediction() -> None:
    """A reader found restore predictions drawn for the demo's vLLM, whose page said it has no tier."""
    rc = summarize("recompute", [Trial("recompute", 0, "s", Outcome(2.0, 2.5, "x"), 2048)], output_tokens=12)
    for profile, predicted in (("llama-cpp-disk.yaml", 1), ("llama-cpp-ram.yaml", 0)):
        result = DeploymentResult("h", "tiny", load_profile(PROFILE_DIR / profile), arms={"recompute": rc})
        add_predictions(result, ArmsResult(trials={}), bound())
        assert len(result.predictions) == predicted, profile
