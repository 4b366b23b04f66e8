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
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.configuration.inventory import Host
from kvgate.configuration.model_profiles import ModelProfile, agent_spec
from kvgate.probes import agentctl
from kvgate.probes.nfs_server import ServerCache
from kvgate.probes.scratch import ScratchDir
from kvgate.probes.workload_results import TO_MEASUREMENTS
from kvgate.record import RunStore
from kvgate.transport import Executor

WORKLOAD_TIMEOUT_S = 6 * 3600


def run_workloads(
    ex: Executor,
    host: Host,
    *,
    directory: ScratchDir,
    store: RunStore,
    notify: Callable[[str], None],
    prefix: str,
    models: Mapping[str, ModelProfile],
    server_cache: ServerCache | None = None,
) -> list[Measurement]:
    """Run the workloads (``models``: each with its model profile, GateConfig.workload_models) one after
    the other in a checked scratch directory; store every result."""
    found: list[Measurement] = []
    for workload, profile in models.items():
        notify(f"agent {workload}")
        spec = agent_spec(profile, workload, target_dir=directory.path)
        job = agentctl.start(ex, workload, spec, target=directory, sudo=host.sudo)
        on_event = functools.partial(_progress, notify, workload)
        res = agentctl.wait(ex, job, on_event, timeout_s=WORKLOAD_TIMEOUT_S)
        ev = store.artifact(ex.host, f"g2/{prefix}/agent/{workload}.json", json.dumps(res, indent=1))
        if res.get("status") != "ok":
            reason = f"agent {workload} failed: {res.get('error') or res.get('status')}"
            found.append(Measurement(f"{workload.replace('-', '_')}.status", None, "", (ev,), reason))
            continue
        found += TO_MEASUREMENTS[workload](res, ev, server_cache)
    return found


def _progress(notify: Callable[[str], None], workload: str, event: dict[str, Any]) -> None:
    if event.get("event") == "progress" and event.get("total_bytes"):
        notify(f"{workload} {event.get('phase')} {event['done_bytes'] / event['total_bytes']:.0%}")
