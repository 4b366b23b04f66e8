"""G2 plan and result mapping: thresholds from the inventory, cold proof, corruption, failures."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Inputs, Verdict
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g2.plan import plan
from kvgate.probes.workload_results import checkpoint_measurements, kv_measurements, model_load_measurements

RECORDED = Path(__file__).resolve().parents[1] / "data" / "recorded" / "agent"


def inventory(volume: dict[str, Any], nics: list[dict[str, Any]] | None = None) -> Inventory:
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": "smoke",
            "hosts": {"h": {"roles": ["storage-client"], "expect": {"nics": nics or []}}},
            "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", **volume}},
        }
    )


def by_check(inv: Inventory) -> dict[str, Any]:
    return {c.check: c for c in plan(in_memory(inv))}


def recorded(workload: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RECORDED / f"smoke-{workload}.json").read_text())
    return data


def test_thresholds_come_from_the_volume_expectations() -> None:
    checks = by_check(inventory({"scratch": True, "expect": {"min_seq_read_gb_per_s": 10, "max_cv": 0.05}}))
    read = checks["volume[v].fio.seqread-1m.bw"].criterion
    assert (read.comparator, read.expected, read.source) == (
        ">=",
        10e9,
        "inventory: volumes.v.expect.min_seq_read_gb_per_s",
    )
    assert checks["volume[v].fio.seqread-1m.cv"].criterion.expected == 0.05


def test_line_rate_fraction_uses_the_rdma_nics_of_the_bom() -> None:
    nics = [{"name": "^ens1f", "count": 2, "speed_mbps": 100000, "rdma": True}]
    checks = by_check(inventory({"scratch": True, "expect": {"line_rate_fraction": 0.8}}, nics))
    read = checks["volume[v].fio.seqread-1m.bw"].criterion
    assert read.expected == 0.8 * 2 * 100e9 / 8  # 20 GB/s of 25 GB/s line rate
    assert "RDMA line rate" in read.source


def test_without_threshold_a_trusted_value_is_required_never_a_default_pass() -> None:
    check = by_check(inventory({"scratch": True}))["volume[v].kv_restore.parallel.bw"]
    assert check.evaluate().verdict is Verdict.INVALID  # not measured
    assert check.criterion.comparator == ">"


def test_non_scratch_volume_is_skipped_with_the_reason() -> None:
    j = by_check(inventory({"scratch": False}))["volume[v].fio.seqwrite-1m.bw"].evaluate()
    assert j.verdict is Verdict.SKIP
    assert "not marked scratch" in j.condition


def test_recorded_agent_results_map_to_trusted_measurements() -> None:
    kv = {m.metric: m for m in kv_measurements(recorded("kv-restore"), "ev")}
    assert kv["kv_restore.corrupt_chunks"].value == 0
    assert kv["kv_restore.parallel.readers_per_request"].value == 4
    assert kv["kv_restore.parallel.read_bw_bytes_per_s"].invalid_reason is None
    ml = {m.metric: m for m in model_load_measurements(recorded("model-load"), "ev")}
    assert "model_load.safetensors.read_bw_bytes_per_s" not in ml  # unavailable here: not faked
    assert ml["model_load.parallel.read_bw_bytes_per_s"].value > 0
    ck = {m.metric: m for m in checkpoint_measurements(recorded("checkpoint"), "ev")}
    assert ck["checkpoint.corrupt_shards"].value == 0


def test_a_restore_the_device_did_not_serve_is_invalid() -> None:
    res = copy.deepcopy(recorded("kv-restore"))
    cold = res["restores"][-1]["cold"]
    cold["counts"]["device_read_bytes"] = 1024
    parallel = {m.metric: m for m in kv_measurements(res, "ev")}["kv_restore.parallel.read_bw_bytes_per_s"]
    assert parallel.invalid_reason is not None
    assert "not cold" in parallel.invalid_reason
    check = by_check(inventory({"scratch": True}))["volume[v].kv_restore.parallel.bw"]
    assert check.evaluate(Inputs({parallel.metric: parallel})).verdict is Verdict.INVALID


def test_corrupt_chunks_fail() -> None:
    res = copy.deepcopy(recorded("kv-restore"))
    res["restores"][0]["checksums_failed"] = 2
    corrupt = {m.metric: m for m in kv_measurements(res, "ev")}
    check = by_check(inventory({"scratch": True}))["volume[v].kv_restore.checksums"]
    assert check.evaluate(Inputs(corrupt)).verdict is Verdict.FAIL
