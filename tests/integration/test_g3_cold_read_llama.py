"""G3 cold read (R1) on the real llama.cpp engine: both readers restore cold, with evidence and bandwidth.

llama.cpp has one reader, so its "serial" and "parallel" profiles are the same
engine here: the phase must still run end to end — fresh tiers, populate,
write-through, restart + dropped page cache, restores proven cold by device,
engine-process and hit counters, restore bandwidth, outputs equal to populate —
and R1 must be *evaluated* (PASS or FAIL on a measured ratio near 1, never SKIP).
It runs at concurrency 1: llama-cpp-python's disk cache keeps one prompt per tier
(a lookup pops the best prefix match, even a BOS-only one), so C prompts on one
tier would leave one restorable. A gate profile at that scale is built here; the
CLI path of the bindings is covered by tests/unit/test_g3_plan.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

from kvgate.base.criteria import Inputs, Verdict
from kvgate.configuration.gate_profiles.g3 import G3Profile, load_g3_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g3.measure import measure_deployment
from kvgate.orchestration.g3.plan import Shape, reference_checks
from kvgate.record.store import RunStore
from kvgate.transport.local import LocalExecutor

pytestmark = LLAMA_ENGINE
R1 = ("cold-read-ttft-speedup", "cold-read-bw-gain")


def profile() -> G3Profile:
    """Smoke, cut to the cold-read phase: 3 single-prompt trials, then 3 cold-read trials at C = 1."""
    p = load_g3_profile("smoke").model_dump()
    p |= {
        "prompt_tokens": 1024,
        "warm": False,
        "concurrency": (),
        "whole_machine": None,
        "storage": None,
        "capacity": None,
        "cold_read": {"concurrency": 1, "trials": 3},
    }
    p["verdicts"] = [v | {"concurrency": 1} for v in p["verdicts"] if v["check"] in R1]
    return G3Profile.model_validate(p)


def test_both_readers_restore_cold_with_evidence_and_r1_is_judged(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    llama = {"serial": "llama-cpp-disk", "parallel": "llama-cpp-disk"}
    inv = Inventory.model_validate(
        {
            "site": "r1",
            "scale": "smoke",
            "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["engine"]}},
            "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
            "engines": {
                "tiny": {
                    "tier_profile": "llama-cpp-disk",
                    "recompute_profile": "llama-cpp-recompute",
                    "volume": "scratch",
                    "port": free_port_pair(1),
                    "cold_read": llama,
                }
            },
        }
    )
    store = RunStore.create(tmp_path / "r", site="r1", gate="g3", meta={})
    p = profile()
    config = dataclasses.replace(in_memory(inv), g3=p)
    events: list[str] = []
    r = measure_deployment(
        LocalExecutor(), config, host="here", name="tiny", store=store, notify=events.append
    )
    first = {what: next(i for i, e in enumerate(events) if what in e) for what in ("cold read", "trial-0:")}
    assert first["cold read"] < first["trial-0:"], events  # R1's readers right after recompute, not last

    for arm in ("serial-read@c1", "parallel-read@c1"):
        s = r.arms[arm]
        assert (s.completed, s.trials, s.invalid_reasons) == (3, 3, []), s  # every restore proven cold
        assert s.prompt_tokens_p50 is not None
        assert s.hit_tokens_p50 is not None
        assert s.hit_tokens_p50 >= 0.9 * s.prompt_tokens_p50
        assert s.device_read_bytes_p50
        assert s.engine_read_bytes_p50
        assert s.read_bw_gb_per_s
        assert s.read_bw_gb_per_s > 0
    assert r.load_mismatches == []  # restored outputs equal what populate computed
    assert r.compared[1] >= 6  # under load: the two readers' restored outputs, 3 trials each

    checks = reference_checks(
        "here",
        "tiny",
        r.tier,
        p,
        config.references,
        shape=Shape.of(inv.engines["tiny"], profiles=config.engine),
    )
    for c in checks:
        m = r.measurements[c.key]
        assert m.invalid_reason is None, m
        assert m.value is not None
        assert 0.3 < m.value < 3.0, m  # one reader against itself: about 1×
        assert c.evaluate(Inputs(r.measurements)).verdict in (
            Verdict.PASS,
            Verdict.FAIL,
        )  # evaluated, not SKIP
    assert list(scratch.iterdir()) == []  # G3 removed its own directories
