"""A gate run plans, measures and judges with the GateConfig it recorded, never a file re-read by name.

On main the gate profiles, engine and model profiles, fio matrix and references were
re-read by name deep in the plans and the measurement code (``engine_profile(name)``,
``load_g3_profile(scale)``, ``load_references()``, …), so what a run judged could differ
from the configuration it recorded in ``configuration.files``, and a GateConfig built in
code was ignored. Every test here fails on main.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kvgate.base import config_file
from kvgate.base.config_file import repo_root
from kvgate.configuration import fio_matrix, references
from kvgate.configuration.engine_profile import engine_profile
from kvgate.configuration.gate_profiles import loader as gate_profiles
from kvgate.configuration.gateconfig import GateConfig, load_config
from kvgate.configuration.model_profiles import model_profile
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.prediction import StorageBound
from kvgate.orchestration.g4.soak import SoakRun
from kvgate.orchestration.gate_plans import plans
from kvgate.orchestration.plan.deployments import Options, plan_inventory
from kvgate.probes.engines import tinyhf
from kvgate.record.store import RunStore
from kvgate.transport.local import LocalExecutor

LAB = repo_root() / "inventory" / "example-lab.yaml"
LOCAL = repo_root() / "inventory" / "local.yaml"
GATES = ("g1", "g2", "g3", "g4", "preflight")


@pytest.fixture
def no_file_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, reading any configuration file fails the test (the loaders' caches emptied first)."""
    for cached in (gate_profiles._read_once, references._shipped, fio_matrix.fio_matrix):
        cached.cache_clear()
    monkeypatch.setattr(engine_profile, "_loaded", {})
    monkeypatch.setattr(model_profile, "_loaded", {})

    def refuse(path: Path) -> bytes:
        raise AssertionError(f"{path} read by name during a gate run")

    monkeypatch.setattr(config_file, "read_bytes", refuse)


def g3_store(tmp_path: Path, config: GateConfig) -> RunStore:
    loaded = config.inventory
    meta = {"inventory": {"path": str(loaded.path), "sha256": loaded.sha256}}
    return RunStore.create(tmp_path / "runs", site=loaded.site, gate="g3", meta=meta)


@pytest.mark.parametrize("inventory", [LOCAL, LAB], ids=["local", "example-lab"])
def test_every_gate_plans_from_its_configuration_without_reading_a_file(
    inventory: Path, request: pytest.FixtureRequest
) -> None:
    config = load_config(inventory)
    request.getfixturevalue("no_file_read")
    for gate in GATES:
        assert [c for plan in plans(gate) for c in plan(config)], gate


def test_g3_and_g4_measurement_set_up_from_the_configuration_without_reading_a_file(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    config = load_config(LAB)
    store = g3_store(tmp_path, config)
    request.getfixturevalue("no_file_read")
    bound = StorageBound.load(store, config, host="gpu-1", name="r2r3-480b")
    assert bound.compare({})  # the planner's rows beside the (here: no) arms
    soak = SoakRun(LocalExecutor(), config, host="gpu-1", name="r2r3-480b", store=store, notify=print)
    assert (soak.tier, soak.profile) == (config.engine("vllm-lmcache"), config.g4)
    assert plan_inventory(config, tmp_path / "runs", Options())


def test_g3_judges_with_the_thresholds_of_its_configuration_not_the_shipped_file() -> None:
    shipped = load_config(LOCAL)
    stricter = tuple(
        b.model_copy(update={"threshold_fraction": 1.2}) if b.check == "ttft-p50-reduction" else b
        for b in shipped.g3.verdicts
    )
    config = dataclasses.replace(shipped, g3=shipped.g3.model_copy(update={"verdicts": stricter}))
    key = "engine[tiny-llama].ttft-p50-reduction"
    was = next(c for c in g3_plan(shipped) if c.check == key).criterion.expected
    now = next(c for c in g3_plan(config) if c.check == key).criterion.expected
    assert isinstance(was, float)
    assert now == pytest.approx(1.2 * was)


def test_the_g3_storage_bound_reads_the_tiny_model_of_its_configuration(tmp_path: Path) -> None:
    """The tier's state per token follows the configuration's engine profile (one serving the HF Llama)."""
    shipped = load_config(LOCAL)
    tier = shipped.engine("llama-cpp-disk").model_copy(update={"tiny_model": "hf"})
    config = dataclasses.replace(shipped, engines={**shipped.engines, tier.name: tier})
    store = g3_store(tmp_path, config)
    llama = StorageBound.load(store, shipped, host="localhost", name="tiny-llama")
    vllm = StorageBound.load(store, config, host="localhost", name="tiny-llama")
    assert vllm.bytes_per_token == tinyhf.kv_bytes_per_token() != llama.bytes_per_token
