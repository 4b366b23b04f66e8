"""Every writer on a volume goes through the scratch check before it creates or removes anything.

Each case plants a symlink inside a scratch volume that leads out of it, exactly where kvgate
makes its work directory, with a customer's file behind it: G2's volume measurement, G3's
model-load/checkpoint workloads and G4's removal of a stored work directory must refuse, and
the file must survive (before the check, G2 and G3 removed it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvgate.configuration.fio_matrix import load_profile
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Host, Inventory, Volume
from kvgate.orchestration.g2.measure import measure_volume
from kvgate.orchestration.g2.workloads import VolumeUnderTest
from kvgate.orchestration.g3.storage import measure_storage, storage_plan
from kvgate.orchestration.g4.soak import SoakRun
from kvgate.probes.scratch import UnsafeWrite, run_directory
from kvgate.record import G4Job
from kvgate.record.store import RunStore
from kvgate.transport.local import LocalExecutor

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(300)
EX = LocalExecutor("here")


def plant(link: Path, outside: Path, below: str) -> Path:
    """``link`` → ``outside``; a customer file at ``outside/below/precious``; returns that file."""
    precious = outside / below / "precious"
    precious.parent.mkdir(parents=True)
    precious.write_text("customer data")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    return precious


def inventory(cand: Path, base: Path) -> Inventory:
    dep = {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute", "volume": "cand"}
    data: dict[str, Any] = {
        "site": "s",
        "scale": "smoke",
        "hosts": {"here": {"transport": "local", "roles": ["engine", "storage-client"]}},
        "volumes": {
            "cand": {"path": str(cand), "kind": "candidate", "scratch": True},
            "nfs": {"path": str(base), "kind": "baseline", "scratch": True},
        },
        "engines": {"tiny": dep},
    }
    return Inventory.model_validate(data)


def test_g2_refuses_a_work_directory_that_leads_out_of_the_volume(tmp_path: Path) -> None:
    (tmp_path / "vol").mkdir()
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    store = RunStore.create(tmp_path / "r", site="s", gate="g2", meta={})
    below = Path(run_directory(vol, gate="g2", host=EX.host, run=store.path.name)).name
    precious = plant(tmp_path / "vol" / "kvgate-g2", tmp_path / "outside", below)
    vut = VolumeUnderTest(
        ex=EX, host=Host(transport="local"), name="vol", volume=vol, store=store, notify=print
    )
    with pytest.raises(UnsafeWrite, match=r"outside .*symlink"):
        measure_volume(vut, models={}, profile=load_profile(REPO / "workloads" / "fio" / "smoke.yaml"))
    assert precious.read_text() == "customer data"


def test_g3_agent_workloads_refuse_a_work_directory_that_leads_out_of_the_volume(tmp_path: Path) -> None:
    (tmp_path / "cand").mkdir()
    (tmp_path / "nfs").mkdir()
    inv = inventory(tmp_path / "cand", tmp_path / "nfs")
    store = RunStore.create(tmp_path / "r", site="s", gate="g3", meta={})
    cand = Volume(path=str(tmp_path / "cand"), kind="candidate", scratch=True)
    below = f"{Path(run_directory(cand, gate='g3', host='here', run=store.path.name)).name}/storage"
    precious = plant(tmp_path / "cand" / "kvgate-g3", tmp_path / "outside", below)
    check = storage_plan(in_memory(inv))[0]
    with pytest.raises(UnsafeWrite, match=r"outside .*symlink"):
        measure_storage(EX, in_memory(inv), [check], store=store, notify=print, servers={})
    assert precious.read_text() == "customer data"


def test_g4_does_not_remove_a_work_directory_an_edited_run_json_points_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "cand").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "precious").write_text("customer data")
    inv = inventory(tmp_path / "cand", tmp_path / "nfs")
    store = RunStore.create(tmp_path / "r", site="s", gate="g4", meta={})
    soak = SoakRun(EX, in_memory(inv), host="here", name="tiny", store=store, notify=print)
    job = {"host": "here", "workload": "soak", "run_id": "r1", "state_dir": "/s", "agent": "/a.pyz"}
    edited = {  # the soak as run.json records it, its work_dir edited to point elsewhere
        "job": job | {"pid": 1, "start_ticks": 1},
        "work_dir": str(tmp_path / "outside"),
        "started_at": "2026-12-05T00:00:00Z",
        "engines": [],
        "spec": {},
    }
    with pytest.raises(UnsafeWrite, match="outside the volume directory"):
        soak._finish([], G4Job.model_validate(edited))
    assert (tmp_path / "outside" / "precious").read_text() == "customer data"
