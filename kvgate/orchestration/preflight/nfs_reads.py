"""The cold reads the gates plan on an NFS volume, and whether its declared server control covers each.

An NFS server's page cache is DRAM in front of the storage under test (kvgate.probes.nfs_server).
Every cold read the gates plan is made cold by dropping that cache over SSH first (``nfs_server.host``):
G2's fio jobs before they run, and the agent's workloads (G2's KV restore, model load and checkpoint,
G3's model load and checkpoint where the volume is a host's storage baseline) between writing their
data and reading it back. Without a host, only a data set larger than the server's RAM
(``nfs_server.ram_gib``) is cold on it. Preflight lists every read that would not be, with its size,
so a volume whose reads cannot be cold fails in minutes instead of every G2 and G3 row being INVALID
hours later. R9's engine loads are not listed: their copies' sizes are read when they load (each load
is preceded by a drop where a host is named).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvgate.base.units import GiB
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import NfsServer
from kvgate.configuration.model_profiles import agent_spec
from kvgate.probes.agent import cold_read_bytes

G3_STORAGE = ("model-load", "checkpoint")
NOWHERE = "/"  # the specs are only parsed here, never run: any existing directory is a valid target


@dataclass(frozen=True)
class PlannedRead:
    """One cold read a gate plans on the volume."""

    what: str  # e.g. "G2 fio seqread-1m", "G3 checkpoint"
    size_bytes: int


def planned_reads(config: GateConfig, volume: str, *, g3_storage: bool) -> list[PlannedRead]:
    """G2's reads on the (scratch) volume, and G3's storage workloads where it is a storage baseline."""
    if not config.inventory.inventory.volumes[volume].scratch:
        return []
    jobs = config.fio.fio_jobs(NOWHERE).items()
    out = [PlannedRead(f"G2 fio {c}", j.working_set_bytes) for c, j in jobs if j.reads]
    for workload, profile in config.workload_models().items():
        spec = agent_spec(profile, workload, target_dir=NOWHERE)
        out.append(PlannedRead(f"G2 agent {workload}", cold_read_bytes(workload, spec)))
    storage = config.g3.storage
    if g3_storage and storage is not None:
        names = {"model-load": storage.model_load, "checkpoint": storage.checkpoint}
        for workload in G3_STORAGE:
            spec = agent_spec(config.models[names[workload]], workload, target_dir=NOWHERE)
            out.append(PlannedRead(f"G3 {workload}", cold_read_bytes(workload, spec)))
    return out


def not_cold(reads: list[PlannedRead], server: NfsServer | None, *, dropped: bool) -> list[str]:
    """Each read the declared control cannot make cold, largest first, saying why."""
    if dropped:
        return []
    ram = server.ram_gib if server else None
    against = f"≤ the server's {ram:g} GiB of RAM" if ram is not None else "and no server RAM declared"
    big_first = sorted(reads, key=lambda r: -r.size_bytes)
    return [
        f"{r.what} reads {r.size_bytes / 1e9:.1f} GB {against}"
        for r in big_first
        if ram is None or r.size_bytes <= ram * GiB
    ]


def shortfall(reads: list[PlannedRead], server: NfsServer | None, *, dropped: bool) -> str | None:
    """How many planned reads cannot be cold, the three largest named; None: every one can be."""
    missing = not_cold(reads, server, dropped=dropped)
    if not missing:
        return None
    more = f"; and {len(missing) - 3} more" if len(missing) > 3 else ""
    return f"{len(missing)} of {len(reads)} planned cold reads cannot be cold: {'; '.join(missing[:3])}{more}"
