"""G3 model loading (R9) and checkpoint (R1): candidate vs baseline, and when it is not evaluable."""

from __future__ import annotations

from typing import Any

from kvgate.g3.storage import StorageResult, storage_plan
from kvgate.inventory.schema import Inventory
from kvgate.judge import Measurement, Verdict


def inventory(scale: str = "smoke", *, baseline: bool = True) -> Inventory:
    vols: dict[str, Any] = {"cand": {"path": "/c", "kind": "candidate", "scratch": True}}
    if baseline:
        vols["nfs"] = {"path": "/n", "kind": "baseline", "scratch": True}
        vols["keep"] = {"path": "/k", "kind": "baseline", "scratch": False}  # never written: not a baseline
    dep = {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute", "volume": "cand"}
    return Inventory.model_validate({
        "site": "s", "scale": scale, "hosts": {"h": {"roles": ["engine", "storage-client"]}},
        "volumes": vols, "engines": {"tiny": dep},
    })  # fmt: skip


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
    return {c.check: c for c in storage_plan(inv)}


def test_each_engine_hosts_candidate_is_compared_with_its_scratch_baseline() -> None:
    checks = by_check(inventory())
    assert sorted(checks) == [
        "storage[cand].checkpoint-save-speedup",
        "storage[cand].checkpoint-write-bw-gain",
        "storage[cand].engine-load-speedup",
        "storage[cand].model-load-speedup",
    ]
    assert {(c.host, c.candidate, c.baseline) for c in checks.values()} == {("h", "cand", "nfs")}


def test_r9_and_r1_are_judged_on_the_fastest_trusted_loader_and_the_snapshot_write() -> None:
    checks = by_check(inventory())
    r = result((None, "nvme2c1n1+nvme2c2n1"))
    load = checks["storage[cand].model-load-speedup"].evaluate(r)
    assert load.verdict is Verdict.PASS
    assert load.condition == "load_time_speedup_x=7 ≥ 6.15 (R9: 6.2×) — cand vs baseline nfs"
    save = checks["storage[cand].checkpoint-save-speedup"].evaluate(r)
    assert save.verdict is Verdict.PASS  # 178 → 94 s is 1.89×: R1's "1.9×" as written (≥ 1.85)
    slower = result((None, "nvme2c1n1+nvme2c2n1"), volume(100.0, 97.0))  # 178 → 97 s: 1.84×
    assert checks["storage[cand].checkpoint-save-speedup"].evaluate(slower).verdict is Verdict.FAIL
    bw = checks["storage[cand].checkpoint-write-bw-gain"].evaluate(r)
    assert bw.verdict is Verdict.FAIL  # +89 % < +96 %: the seed's own R1 figures disagree (X1/X2)


def test_an_untrusted_cold_read_is_never_the_fastest_loader_and_all_untrusted_is_invalid() -> None:
    check = by_check(inventory())["storage[cand].model-load-speedup"]
    j = check.evaluate(result(("a", "b"), volume(100.0, 94.0, None, "not cold: vda read 0 bytes")))
    assert j.measurement is not None
    assert j.measurement.value == 700 / 200  # the trusted sequential load, not the untrusted parallel one
    j = check.evaluate(result(("a", "b"), volume(100.0, 94.0, "not cold", "not cold")))
    assert j.verdict is Verdict.INVALID
    assert "cand: not cold" in j.condition


def test_the_same_device_is_not_evaluable_and_shows_the_numbers() -> None:
    j = by_check(inventory())["storage[cand].model-load-speedup"].evaluate(result(("vda", "vda")))
    assert j.verdict is Verdict.SKIP  # smoke declares it
    assert "load_time_speedup_x=7" in j.condition
    assert "share block device vda" in j.condition
    full = by_check(inventory("full"))["storage[cand].model-load-speedup"].evaluate(result(("vda", "vda")))
    assert full.verdict is Verdict.INVALID


def test_without_a_baseline_volume_nothing_is_measured_and_nothing_passes() -> None:
    checks = by_check(inventory(baseline=False))
    assert {c.baseline for c in checks.values()} == {None}
    j = checks["storage[cand].model-load-speedup"].evaluate(None)
    assert j.verdict is Verdict.SKIP
    assert "has no scratch baseline volume" in j.condition
    full = by_check(inventory("full", baseline=False))["storage[cand].checkpoint-save-speedup"].evaluate(None)
    assert full.verdict is Verdict.INVALID


def test_a_failed_workload_keeps_its_reason() -> None:
    r = result(("a", "b"))
    r.measured["cand"] = {
        "model_load.status": Measurement("status", None, "", (), "agent model-load failed: boom")
    }
    j = by_check(inventory())["storage[cand].model-load-speedup"].evaluate(r)
    assert j.verdict is Verdict.INVALID
    assert "agent model-load failed: boom" in j.condition


def test_r9_by_the_engine_is_judged_on_its_logged_weight_load_time() -> None:
    check = by_check(inventory())["storage[cand].engine-load-speedup"]
    r = result((None, "nvme2c1n1+nvme2c2n1"))
    r.measured["nfs"]["engine.weights_load_s"] = Measurement("engine.weights_load_s", 700.0, "s")
    r.measured["cand"]["engine.weights_load_s"] = Measurement("engine.weights_load_s", 100.0, "s")
    j = check.evaluate(r)
    assert j.verdict is Verdict.PASS  # 7× ≥ 6.2× (the seed's own 691 → 112 s is 6.17×: rounded up)
    r.measured["cand"].pop("engine.weights_load_s")
    r.measured["cand"]["engine.status"] = Measurement("status", None, "", (), "llama-cpp does not log it")
    j = check.evaluate(r)
    assert j.verdict is Verdict.INVALID
    assert "cand: llama-cpp does not log it" in j.condition
