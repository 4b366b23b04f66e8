"""The cold proof, in one place: which devices carry a volume's I/O, their counters, the engines' reads.

A number kvgate calls "cold" was served by the storage under test, and this package
is how that is proven (FIELD-NOTES 1–3: LMCache #1522, #1741, dlio_benchmark #277).
It is stdlib-only Python 3.8 and ships inside the agent zipapp, so the same code
runs in the agent's workloads on a host and, through ``python3 agent.pyz evidence``,
for the controller (kvgate.probes.hostevidence):

    blockdev.py  a volume → the block devices that really carry its I/O: a disk or
                 partition itself; an NVMe native-multipath head → its path devices
                 (before ~6.2 the head has no I/O accounting); dm (multipath, LVM) and
                 md → their slaves, recursively. The resolver takes a sysfs root, so
                 recorded trees test it
    nfs.py       an NFS mount → its client counters (/proc/self/mountstats: bytes read
                 from the server) and mount options
    counters.py  device read bytes by kernel name (/proc/diskstats, 512-byte sectors),
                 the page cache, dropping it, the host's load (load average, CPU steal)
    engines.py   an engine is a process tree (vLLM's EngineCore and workers, SGLang's
                 schedulers): its read bytes summed over its session (kvgate starts it
                 under setsid), or its cgroup v2 ``io.stat`` when it runs in one (a container)
    window.py    a snapshot of all of it, the delta over a measured window, and the one
                 ``cold_reason()`` every gate uses
    probe.py     the counter sanity probe: an O_DIRECT read of N MiB must move the
                 volume's counters by N, or no cold number on it can be trusted
    cli.py       the JSON commands the controller runs on a host
"""

from __future__ import annotations

from kvgate.probes.evidence.blockdev import Resolved, resolve
from kvgate.probes.evidence.cli import main
from kvgate.probes.evidence.counters import device_bytes, drop_caches
from kvgate.probes.evidence.engines import EngineGone, cgroup_pids, engine_reads
from kvgate.probes.evidence.probe import DEFAULT_MIB
from kvgate.probes.evidence.window import Counts, cold_reason, snapshot

__all__ = [
    "DEFAULT_MIB",
    "Counts",
    "EngineGone",
    "Resolved",
    "cgroup_pids",
    "cold_reason",
    "device_bytes",
    "drop_caches",
    "engine_reads",
    "main",
    "resolve",
    "snapshot",
]
