"""G3's tier probe on the real llama.cpp engine: a tier that cannot be measured stops G3 in minutes.

Issue 12: an SSD tier that never writes (here: a profile whose tier directory is not
where the engine writes), or that forgets its files when made cold, used to show only
after the whole recompute block, as hours of INVALID restores. The probe sends one
prompt through populate → make cold → restore on a fresh tier engine first; when it
fails, every check of the deployment is INVALID with the probe's reason and no arm runs.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

from kvgate.configuration.gateconfig import GateConfig, in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g3 import measure
from kvgate.record.store import RunStore
from kvgate.transport.local import LocalExecutor

pytestmark = LLAMA_ENGINE


def misplaced_tier(config: GateConfig) -> GateConfig:
    """The configuration with llama-cpp-disk's tier directory not where the engine writes."""
    profile = config.engine("llama-cpp-disk")
    assert profile.cache is not None
    wrong = profile.cache.model_copy(update={"kv_dir": "{cache_dir}/not-where-it-writes"})
    engines = {**config.engines, profile.name: profile.model_copy(update={"cache": wrong})}
    return dataclasses.replace(config, engines=engines)


def test_a_tier_that_never_writes_stops_g3_at_the_probe(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inv = Inventory.model_validate(
        {
            "site": "probe",
            "scale": "smoke",
            "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["engine"]}},
            "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
            "engines": {
                "tiny": {
                    "tier_profile": "llama-cpp-disk",
                    "recompute_profile": "llama-cpp-recompute",
                    "volume": "scratch",
                    "port": free_port_pair(1),
                }
            },
        }
    )
    store = RunStore.create(tmp_path / "r", site="probe", gate="g3", meta={})
    r = measure.measure_deployment(
        LocalExecutor(),
        misplaced_tier(in_memory(inv)),
        host="here",
        name="tiny",
        store=store,
        notify=lambda e: None,
    )

    assert "recompute" not in r.engines  # stopped before the first arm
    assert r.arms == {}
    reasons = {m.invalid_reason for m in r.measurements.values()}
    assert len(reasons) == 1, reasons
    [reason] = reasons
    assert reason is not None
    assert reason.startswith("tier probe: ")
    assert "no write-through: the tier directory grew 0 B" in reason
    assert {"write-through", "cold-proof", "correctness"} <= set(r.measurements)
    assert list(scratch.iterdir()) == []
