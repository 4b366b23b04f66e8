"""The storage-level workloads of G2 through the agent: KV restore, model load, checkpoint.

Each runs detached on the host (`kvgate.probes.agentctl`); its result JSON is stored as
an artifact and turned into Measurements. A read whose device counters do not
account for the bytes it returned, or whose O_DIRECT silently fell back, is
INVALID with the numbers (LMCache #1522, dlio_benchmark #277).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.configuration.inventory import Host, Volume
from kvgate.configuration.model_profiles import ModelProfile, agent_spec
from kvgate.probes import agentctl
from kvgate.probes.nfs_server import ServerCache
from kvgate.probes.scratch import ScratchDir
from kvgate.probes.workload_results import TO_MEASUREMENTS
from kvgate.record import RunStore
from kvgate.transport import Executor

WORKLOAD_TIMEOUT_S = 6 * 3600


@dataclass(frozen=True, kw_only=True)
class VolumeUnderTest:
    """One scratch volume of one host that G2 measures: how to reach it and where its results go."""

    ex: Executor
    host: Host
    name: str  # the volume's inventory name: its artifacts are stored under g2/<name>/
    volume: Volume
    store: RunStore
    notify: Callable[[str], None]
    server_cache: ServerCache | None = None  # an NFS volume's server cache (kvgate.probes.nfs_server)


def run_workloads(
    vut: VolumeUnderTest, directory: ScratchDir, *, models: Mapping[str, ModelProfile]
) -> list[Measurement]:
    """Run the workloads (``models``: each with its model profile, GateConfig.workload_models) one after
    the other in a checked scratch directory; store every result."""
    ex = vut.ex
    found: list[Measurement] = []
    for workload, profile in models.items():
        vut.notify(f"agent {workload}")
        spec = agent_spec(profile, workload, target_dir=directory.path)
        job = agentctl.start(ex, workload, spec, target=directory, sudo=vut.host.sudo)
        on_event = functools.partial(_progress, vut.notify, workload)
        res = agentctl.wait(
            ex,
            job,
            on_event,
            timeout_s=WORKLOAD_TIMEOUT_S,
            server_drop=vut.server_cache.answer if vut.server_cache else None,
        )
        ev = vut.store.artifact(ex.host, f"g2/{vut.name}/agent/{workload}.json", json.dumps(res, indent=1))
        if res.get("status") != "ok":
            reason = f"agent {workload} failed: {res.get('error') or res.get('status')}"
            found.append(Measurement(f"{workload.replace('-', '_')}.status", None, "", (ev,), reason))
            continue
        found += TO_MEASUREMENTS[workload](res, ev, vut.server_cache)
    return found


def _progress(notify: Callable[[str], None], workload: str, event: dict[str, Any]) -> None:
    if event.get("event") == "progress" and event.get("total_bytes"):
        notify(f"{workload} {event.get('phase')} {event['done_bytes'] / event['total_bytes']:.0%}")
