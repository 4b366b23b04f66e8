"""G3 model loading (R9) and checkpoint (R1): candidate vs baseline, and when it is not evaluable."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from kvgate.base.criteria import Measurement, Verdict
from kvgate.configuration.gate_profiles.g3 import StorageBinding
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.configuration.model_profiles import agent_spec, load_profiles
from kvgate.configuration.references import load_references
from kvgate.orchestration.g3.starts import combine, run_starts
from kvgate.orchestration.g3.storage import StorageResult, evaluate_storage, storage_plan


def inventory(scale: str = "smoke", *, baseline: bool = True) -> Inventory:
    vols: dict[str, Any] = {"cand": {"path": "/c", "kind": "candidate", "scratch": True}}
    if baseline:
        vols["nfs"] = {"path": "/n", "kind": "baseline", "scratch": True}
        vols["keep"] = {"path": "/k", "kind": "baseline", "scratch": False}  # never written: not a baseline
    dep = {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute", "volume": "cand"}
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": scale,
            "hosts": {"h": {"roles": ["engine", "storage-client"]}},
            "volumes": vols,
            "engines": {"tiny": dep},
        }
    )


def volume(load_s: float, write_s: float, *reasons: str | None) -> dict[str, Measurement]:
    """Agent measurements of one volume; `reasons` mark (sequential, parallel) loads untrusted."""
    seq, par = (*reasons, None, None)[:2]
    return {
        "model_load.sequential.elapsed_s": Measurement(
            "model_load.sequential.elapsed_s", load_s * 2, "s", (), seq
        ),
        "model_load.parallel.elapsed_s": Measurement("model_load.parallel.elapsed_s", load_s, "s", (), par),
        "checkpoint.write_s": Measurement("checkpoint.write_s", write_s, "s"),
        "checkpoint.write_bw_bytes_per_s": Measurement(
            "checkpoint.write_bw_bytes_per_s", 65.6e9 / write_s, "B/s"
        ),
    }


def result(devices: tuple[str | None, str], candidate: dict[str, Measurement] | None = None) -> StorageResult:
    r = StorageResult("h", "cand", "nfs")
    r.measured = {"nfs": volume(700.0, 178.0), "cand": candidate or volume(100.0, 94.0)}
    r.devices = {
        "nfs": devices[0],
        "cand": devices[1],
    }  # NFS: no block device (its counters are the client's)
    return r


def by_check(inv: Inventory) -> dict[str, Any]:
    return {c.check: c for c in storage_plan(in_memory(inv))}


def engines(cand: tuple[float, float], nfs: tuple[float, float], key: str = "engine") -> StorageResult:
    """A result whose engine started (ready s, weights s) on each volume."""
    r = result((None, "nvme2c1n1+nvme2c2n1"))
    for volume, (ready, weights) in (("cand", cand), ("nfs", nfs)):
        r.measured[volume][f"{key}.ready_s"] = Measurement(f"{key}.ready_s", ready, "s")
        r.measured[volume][f"{key}.weights_load_s"] = Measurement(f"{key}.weights_load_s", weights, "s")
    return r


def test_each_engine_hosts_candidate_is_compared_with_its_scratch_baseline() -> None:
    checks = by_check(inventory())
    assert sorted(checks) == [
        "storage[cand].checkpoint-save-speedup",
        "storage[cand].checkpoint-write-bw-gain",
        "storage[cand].service-load-32b",
        "storage[cand].service-load-70b",
    ]
    assert {(c.host, c.spec.candidate, c.spec.baseline) for c in checks.values()} == {("h", "cand", "nfs")}


def test_r9_is_service_load_judged_on_the_time_to_ready_with_the_weight_load_shown_beside() -> None:
    checks = by_check(inventory())
    r = engines(cand=(112.0, 40.0), nfs=(691.0, 600.0))  # R9's own 32B figures, as ready times
    j = evaluate_storage(checks["storage[cand].service-load-32b"], r)
    assert j.verdict is Verdict.PASS  # 6.17×: "6.2×" as written
    assert j.condition.startswith(
        "load_time_speedup_x=6.17 ≥ 6.15 (R9: 6.2×) — inside the seed's 6.2×; cand vs baseline nfs"
    )
    assert "inside the seed's 6.2×" in j.condition
    assert "weights only (not judged): cand 40 s, nfs 600 s" in j.condition
    assert (
        evaluate_storage(checks["storage[cand].service-load-70b"], r).verdict is Verdict.FAIL
    )  # 6.17× < 9.3×
    weights_fast = engines(cand=(200.0, 20.0), nfs=(691.0, 600.0))  # weights 30×, service 3.5×
    assert evaluate_storage(checks["storage[cand].service-load-32b"], weights_fast).verdict is Verdict.FAIL


def test_r1_checkpoint_states_its_reading_and_that_the_baseline_is_the_sites() -> None:
    checks = by_check(inventory())
    r = result((None, "nvme2c1n1+nvme2c2n1"))
    save = evaluate_storage(checks["storage[cand].checkpoint-save-speedup"], r)
    assert save.verdict is Verdict.PASS  # 178 → 94 s is 1.89×: R1's "1.9×" as written (≥ 1.85)
    assert "4 ranks × 0.06711 GB (its share of one snapshot per rank)" in save.condition  # smoke profile
    assert "read as one 65.6 GB snapshot per card (524.8 GB per save" in save.condition
    assert "the seed names no baseline storage for this row, so the site's baseline volume" in save.condition
    slower = result((None, "nvme2c1n1+nvme2c2n1"), volume(100.0, 97.0))  # 178 → 97 s: 1.84×
    assert evaluate_storage(checks["storage[cand].checkpoint-save-speedup"], slower).verdict is Verdict.FAIL
    bw = evaluate_storage(checks["storage[cand].checkpoint-write-bw-gain"], r)
    assert bw.verdict is Verdict.FAIL  # +89 % < +96 %: the seed's own R1 figures disagree (X1/X2)
    full = by_check(inventory("full"))["storage[cand].checkpoint-save-speedup"]
    assert "each save: 8 ranks × 65.6 GB (a whole snapshot per rank) = 524.8 GB" in full.spec.reading


def test_the_full_checkpoint_profile_writes_a_whole_snapshot_per_rank() -> None:
    lora = load_profiles()["qwen2.5-32b-lora"]
    assert agent_spec(lora, "checkpoint", target_dir="/c")["snapshot_bytes"] == 8 * 65_600_000_000
    g2 = load_profiles()["qwen2.5-32b"]  # G2's baseline keeps one snapshot split over the ranks
    assert agent_spec(g2, "checkpoint", target_dir="/c")["snapshot_bytes"] == 65_600_000_000


def test_an_untrusted_cold_read_is_never_the_fastest_loader_and_all_untrusted_is_invalid() -> None:
    r = result(("a", "b"), volume(100.0, 94.0, None, "not cold: vda read 0 bytes"))
    fastest = r.statistic("cand", "model_load_s")
    assert fastest is not None
    assert fastest.value == 200  # the trusted sequential load, not the untrusted parallel one
    r = result(("a", "b"), volume(100.0, 94.0, "not cold", "not cold"))
    binding = StorageBinding(check="x", reference="R9-load-time-deepseek-32b", statistic="model_load_s")
    assert r.improvement(binding, load_references().get(binding.reference)).invalid_reason == "cand: not cold"


def test_the_same_device_is_not_evaluable_and_shows_the_numbers() -> None:
    same = engines(cand=(100.0, 10.0), nfs=(700.0, 70.0))
    same.devices = {"cand": "vda", "nfs": "vda"}
    j = evaluate_storage(by_check(inventory())["storage[cand].service-load-32b"], same)
    assert j.verdict is Verdict.SKIP  # smoke declares it
    assert "load_time_speedup_x=7" in j.condition
    assert "share block device vda" in j.condition
    full = evaluate_storage(
        by_check(inventory("full"))["storage[cand].checkpoint-save-speedup"], result(("vda", "vda"))
    )
    assert full.verdict is Verdict.INVALID


def test_without_a_baseline_volume_nothing_is_measured_and_nothing_passes() -> None:
    checks = by_check(inventory(baseline=False))
    assert {c.spec.baseline for c in checks.values()} == {None}
    j = evaluate_storage(checks["storage[cand].service-load-32b"], None)
    assert j.verdict is Verdict.SKIP
    assert "declares no second baseline volume kvgate may write to, besides its KV tier" in j.condition
    full = evaluate_storage(
        by_check(inventory("full", baseline=False))["storage[cand].checkpoint-save-speedup"], None
    )
    assert full.verdict is Verdict.INVALID


def test_a_failed_engine_start_keeps_its_reason() -> None:
    r = engines(cand=(100.0, 10.0), nfs=(700.0, 70.0))
    del r.measured["cand"]["engine.ready_s"]
    r.measured["cand"]["engine.status"] = Measurement(
        "status", None, "", (), "the engine did not start: boom"
    )
    j = evaluate_storage(by_check(inventory())["storage[cand].service-load-32b"], r)
    assert j.verdict is Verdict.INVALID
    assert "cand: the engine did not start: boom" in j.condition


LAB_LOADS = {
    "deepseek-32b": {
        "hosts": ["npu"],
        "profile": "vllm-ascend",
        "env": {"ASCEND_RT_VISIBLE_DEVICES": "0,1"},
        "copies": {"cand": "/c/models/DeepSeek-R1-Distill-Qwen-32B", "nfs": "/n/models/32b"},
    },
}


def lab(loads: dict[str, Any]) -> Inventory:
    data = inventory("full").model_dump()
    data["hosts"]["npu"] = {"roles": ["storage-client"]}
    data["volumes"]["nfs2"] = {"path": "/n2", "kind": "baseline", "scratch": True}
    return Inventory.model_validate(data | {"model_loads": loads})


def test_r9_at_full_scale_starts_each_model_load_on_its_hosts_and_a_missing_one_is_invalid() -> None:
    checks = by_check(lab(LAB_LOADS))
    r32 = checks["storage[cand].service-load-32b"]
    assert (r32.host, r32.spec.candidate, r32.spec.baseline, r32.spec.binding.model_load) == (
        "npu",
        "cand",
        "nfs",
        "deepseek-32b",
    )
    r = engines(cand=(112.0, 40.0), nfs=(691.0, 600.0), key="service[deepseek-32b]")
    assert evaluate_storage(r32, r).verdict is Verdict.PASS  # the model load's numbers, not the deployment's
    missing = checks["storage[deepseek-70b].service-load-70b"]
    j = evaluate_storage(missing, None)
    assert (missing.host, j.verdict) == ("cluster", Verdict.INVALID)
    assert "the inventory declares no model load 'deepseek-70b' (model_loads" in j.condition
    assert {c.host for c in checks.values() if "checkpoint" in c.check} == {"h"}  # the deployment's host


def test_a_model_load_needs_a_copy_on_a_candidate_and_on_a_baseline_volume() -> None:
    kept = {"deepseek-32b": LAB_LOADS["deepseek-32b"] | {"copies": {"cand": "/c/m", "keep": "/k/m"}}}
    with pytest.raises(ValidationError, match="volume 'keep' is not scratch"):
        lab(kept)
    two = {"deepseek-32b": LAB_LOADS["deepseek-32b"] | {"copies": {"nfs": "/n/m", "nfs2": "/n2/m"}}}
    with pytest.raises(ValidationError, match="expected a copy on a candidate and on a baseline volume"):
        lab(two)
    relative = {"deepseek-32b": LAB_LOADS["deepseek-32b"] | {"copies": {"cand": "m", "nfs": "/n/m"}}}
    with pytest.raises(ValidationError, match="copies of cand: expected an absolute path"):
        lab(relative)


def test_r9_starts_once_untimed_then_alternates_the_volumes_and_judges_the_median_with_its_spread() -> None:
    calls: list[tuple[str, str]] = []

    def start(volume: str, label: str) -> dict[str, Measurement]:
        calls.append((volume, label))
        ready = {"cand": 112.0, "nfs": 691.0}[volume] + (300.0 if label == "warm-up" else len(calls))
        return {"engine.ready_s": Measurement("engine.ready_s", ready, "s", (f"{volume}/{label}",))}

    found = run_starts(("cand", "nfs"), 2, start)
    # the warm-up pays every start-up cache and is not timed; then ABBA, so neither volume always goes first
    assert calls == [
        ("cand", "warm-up"),
        ("cand", "start-0"),
        ("nfs", "start-0"),
        ("nfs", "start-1"),
        ("cand", "start-1"),
    ]
    cand = found["cand"]
    assert cand["engine.ready_s"].value == pytest.approx((114.0 + 117.0) / 2)
    assert cand["engine.ready_s"].evidence == ("cand/start-0", "cand/start-1")  # the warm-up is not evidence
    assert cand["engine.ready_s_starts"].value == "114, 117 s"
    assert cand["engine.ready_s_spread"].value == pytest.approx(3.0 / 115.5)
    r = StorageResult("h", "cand", "nfs", measured=found, devices={"cand": "vda", "nfs": "server"})
    j = evaluate_storage(by_check(inventory())["storage[cand].service-load-32b"], r)
    assert (
        "median of timed starts after an untimed warm-up, volumes alternating: cand 114, 117 s" in j.condition
    )
    assert "nfs 694, 695 s (spread 0%)" in j.condition


def test_a_start_that_gave_no_time_leaves_the_volumes_figure_untrusted() -> None:
    one = {"engine.ready_s": Measurement("engine.ready_s", 10.0, "s")}
    failed = {"engine.status": Measurement("status", None, "", (), "the engine did not start from nfs")}
    combined = combine([one, failed])
    assert combined["engine.ready_s"].invalid_reason == "1 of 2 timed starts gave no ready_s"
    assert combined["engine.status"].invalid_reason == "the engine did not start from nfs"
