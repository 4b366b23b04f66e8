"""An agent read on the lab's kernel NFS share is cold: the server's cache dropped between write and read.

The agent writes its data through the client and reads it back in one run; the array guest's page
cache holds what the client wrote. Between the two the agent asks the controller for the drop
(kvgate.probes.agent.cold.server_drop), which G2 and G3 answer over SSH on the server
(kvgate.probes.nfs_server). Without an answer the read is INVALID, naming why.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import INVENTORY

from kvgate.configuration.gateconfig import load_config
from kvgate.probes import agentctl
from kvgate.probes.nfs_server import ServerCache
from kvgate.probes.scratch import checked, create, remove
from kvgate.probes.workload_results import cold_reason
from kvgate.transport import Executor, connect

pytestmark = pytest.mark.timeout(1800)  # the first lab test waits for the lab to boot
MODEL = {"model_bytes": 32 << 20, "shards": 2, "hidden_size": 256, "loaders": ["sequential"]}


@pytest.fixture(scope="module")
def executors(lab: dict[str, object]) -> Iterator[dict[str, Executor]]:
    inv = load_config(INVENTORY).inventory.inventory
    exs = {name: connect(name, inv.hosts[name]) for name in ("lab-client", "lab-array")}
    yield exs
    for ex in exs.values():
        ex.close()


def load_on_nfs(executors: dict[str, Executor], server: ServerCache | None, name: str) -> dict[str, Any]:
    """A sequential model load on the NFS volume, its server-drop requests answered by ``server``."""
    inv = load_config(INVENTORY).inventory.inventory
    ex = executors["lab-client"]
    target = checked(ex, inv.volumes["nfs"], f"/mnt/nfs/kvgate/lab-agent-{name}")
    create(ex, target, fresh=True)
    try:
        job = agentctl.start(ex, "model-load", MODEL | {"target_dir": target.path}, target=target)
        res = agentctl.wait(ex, job, None, timeout_s=900, server_drop=server.answer if server else None)
    finally:
        remove(ex, target)
    assert res["status"] == "ok", res.get("error")
    (load,) = res["loads"]
    return dict(load)


def test_the_server_cache_is_dropped_between_the_write_and_the_read_back(
    executors: dict[str, Executor],
) -> None:
    inv = load_config(INVENTORY).inventory.inventory
    load = load_on_nfs(executors, ServerCache.of(inv, "nfs", executors), "dropped")
    cold = load["cold"]
    assert cold["volume"]["kind"] == "nfs"
    assert cold["server_drop"] == {"controlled": True, "how": "dropped on lab-array (root)"}
    assert cold_reason(cold, load, None) is None
    assert cold["counts"]["device_read_bytes"] >= 32 << 20  # the client read it all from the server


def test_an_unanswered_request_leaves_the_read_invalid_naming_why(executors: dict[str, Executor]) -> None:
    load = load_on_nfs(executors, None, "unanswered")
    cold = load["cold"]
    assert cold["server_drop"] == {"controlled": False, "how": "this run controls no NFS server"}
    assert cold_reason(cold, load, None) == "NFS server cache not controlled: this run controls no NFS server"
