"""One Check type for every gate: bound to its reference when planned, "not evaluable" said one way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvgate.base.criteria import Inputs, Measurement, Verdict
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory import load
from kvgate.configuration.inventory.schema import Inventory
from kvgate.judgement import Check, gate_verdict
from kvgate.orchestration.g1 import plan as g1_plan
from kvgate.orchestration.g2.nic_counters import nic_plan
from kvgate.orchestration.g2.plan import plan as g2_plan
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.storage import evaluate_storage, storage_plan
from kvgate.orchestration.g4.plan import plan as g4_plan
from kvgate.orchestration.preflight.plan import plan as preflight_plan

LOCAL = Path(__file__).resolve().parents[2] / "inventory" / "local.yaml"


def tiny(*, kv_baseline: bool = False, **volumes: Any) -> Inventory:
    """``kv_baseline``: the deployment's KV tier also on a baseline volume (R2/R3)."""
    nvme = {"nvme": {"path": "/srv/kv", "kind": "baseline", "scratch": True}} if kv_baseline else {}
    return Inventory.model_validate(
        {
            "site": "s",
            "scale": "smoke",
            "hosts": {"h": {"roles": ["engine", "storage-client"]}},
            "volumes": {"cand": {"path": "/mnt/c", "kind": "candidate", "scratch": True}} | nvme | volumes,
            "engines": {
                "tiny": {
                    "tier_profile": "llama-cpp-disk",
                    "recompute_profile": "llama-cpp-recompute",
                    "volume": "cand",
                }
                | ({"baseline_volume": "nvme"} if kv_baseline else {})
            },
        }
    )


def test_every_gate_plans_the_one_check_type() -> None:
    inv = load(LOCAL).inventory
    plans = (g1_plan, g2_plan, nic_plan, g3_plan, storage_plan, g4_plan, preflight_plan)
    for plan in plans:
        checks = plan(in_memory(inv))
        assert all(isinstance(c, Check) for c in checks), plan.__module__
    assert {type(c) for plan in plans for c in plan(in_memory(inv))} == {Check}


def test_a_reference_is_bound_when_planned_and_never_read_again_to_judge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks = {c.check: c for c in g3_plan(in_memory(tiny(kv_baseline=True)))}
    ttft = checks["engine[tiny].ttft-p50-reduction"]
    assert ttft.bound is not None
    assert ttft.bound.reference.id == ttft.rule

    def refuse(*_: object) -> None:
        raise AssertionError("references.yaml read at evaluation")

    for module in ("kvgate.configuration.references", "kvgate.configuration.gateconfig"):
        monkeypatch.setattr(f"{module}.load_references", refuse)
    m = Measurement(ttft.criterion.metric, 40.0, "%")
    levels = {f"{ttft.key}@c{c}": m for c in ttft.bound.levels}
    j = ttft.evaluate(Inputs({ttft.key: m} | levels))
    assert j.verdict is Verdict.SKIP  # judged, then shown as not comparable: a smoke profile's arms
    assert "(R2: ↓26–32%)" in j.condition
    assert j.inputs is not None
    assert set(j.inputs.measured) == {ttft.key, *levels}


def test_not_evaluable_is_said_one_way_whatever_the_gate() -> None:
    no_baseline = {c.check: c for c in storage_plan(in_memory(tiny()))}["storage[cand].service-load-32b"]
    j = evaluate_storage(no_baseline, None)
    assert j.verdict in (Verdict.SKIP, Verdict.INVALID)
    assert j.condition.startswith(f"{no_baseline.criterion.metric}: not ")
    assert "declares no second baseline volume kvgate may write to, besides its KV tier" in j.condition
    no_engine = g4_plan(in_memory(Inventory.model_validate({"site": "s", "hosts": {"h": {}}})))[0]
    assert no_engine.evaluate().condition.startswith("engine_hosts: not evaluable — ")


def test_the_gate_verdict_never_passes_what_was_not_evaluated() -> None:
    assert gate_verdict([Verdict.PASS, Verdict.SKIP, Verdict.WAIVED]) is Verdict.WAIVED
    assert gate_verdict([Verdict.SKIP]) is Verdict.SKIP
    assert gate_verdict([Verdict.PASS, None]) is Verdict.ERROR
    assert gate_verdict([Verdict.FAIL, None]) is Verdict.FAIL
    assert gate_verdict([]) is Verdict.ERROR


def test_preflight_skips_a_metrics_check_whose_profile_names_no_counter() -> None:
    """'0 of 0 counters missing' would be a PASS of nothing: a profile with a /metrics but no hit counter."""
    inv = tiny().model_copy(deep=True)
    inv.engines["tiny"] = inv.engines["tiny"].model_copy(update={"tier_profile": "vllm-ascend"})
    (metrics,) = [c for c in preflight_plan(in_memory(inv)) if c.check == "engine[tiny].metrics"]
    judged = metrics.evaluate()
    assert judged.verdict is Verdict.SKIP
    assert "vllm-ascend names no counter on its /metrics (hit_counter): none to read" in judged.condition
