"""Counters bracketing a measured window, and the one wording of "why this read was not cold".

A snapshot reads, in one go on the host: the read and written bytes of every device
that carries the volume (or, on NFS, the bytes its client read from the server), the
read bytes of every engine (its session or cgroup), the page cache, the host's load
(load average, CPU time stolen by the hypervisor: what else ran beside the window), and
the length of any log the caller will read the window's part of. Two snapshots give ``Counts``;
``cold_reason`` judges them against what the measured reads needed. Other readers of
the same devices can only raise the counts: a proof can be fooled by concurrent load,
never failed by it.

>>> c = Counts(device_read_bytes=50, device_written_bytes=0, engine_read_bytes=None, counted_on="vda")
>>> cold_reason(c, needed_bytes=1000, what="restore", caches_dropped=True)
'not cold: vda read 50 B of the 1000 B the restore needed (5% < 90%)'
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from kvgate.probes.evidence.blockdev import Resolved, device_numbers
from kvgate.probes.evidence.counters import cpu_ticks, device_bytes, load_average, meminfo_bytes
from kvgate.probes.evidence.engines import engine_reads, process_reads
from kvgate.probes.evidence.nfs import mount

MIN_COLD_RATIO = 0.9  # device (and engine) bytes / the bytes the measured reads needed


def snapshot(
    volume: Resolved | None,
    *,
    engines: tuple[tuple[int, str], ...] = (),
    count_lines: tuple[str, ...] = (),
    proc_root: str = "/proc",
) -> dict[str, Any]:
    """Every counter of one instant: devices (or NFS), engines ((leader pid, scope) each), page cache."""
    snap: dict[str, Any] = {
        "t_unix_s": time.time(),
        "cached_bytes": meminfo_bytes("Cached", proc_root=proc_root),
        "mem_total_bytes": meminfo_bytes("MemTotal", proc_root=proc_root),
        "load_avg_1m": load_average(proc_root=proc_root),
        "cpu_ticks": cpu_ticks(proc_root=proc_root),
        "readers": process_reads(proc_root=proc_root),
    }
    if volume is not None and volume.kind == "nfs":
        nfs = mount(volume.mount_point, proc_root=proc_root)
        snap["nfs"] = nfs.to_json() if nfs else None
    elif volume is not None and volume.carriers:
        snap["devices"] = {n: list(v) for n, v in device_bytes(volume.carriers, proc_root=proc_root).items()}
    numbers = device_numbers((volume.head, *volume.carriers)) if volume and volume.head else ()
    block = volume is None or volume.kind != "nfs"
    snap["engines"] = [
        engine_reads(pid, scope, volume_devices=numbers, block_volume=block, proc_root=proc_root)
        for pid, scope in engines
    ]
    snap["lines"] = {path: _lines(path) for path in count_lines}
    return snap


def _lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


@dataclass(frozen=True)
class Counts:
    """What happened between two snapshots."""

    device_read_bytes: int | None  # None: nothing counts this volume's reads
    device_written_bytes: int | None
    engine_read_bytes: int | None  # None: no engine, or an engine's counters were unreadable
    counted_on: str  # what the device numbers are: "nvme2c1n1+nvme2c2n1", "NFS server reads of /mnt/nfs"
    page_cache_bytes_before: int = 0
    page_cache_bytes_after: int = 0
    load_avg_1m: float | None = None  # the host's 1-minute load average at the window's end
    cpu_steal_share: float | None = None  # of the host's CPU time in the window, stolen by the hypervisor
    engines_counted: tuple[str, ...] = ()  # how each engine's bytes were counted (``engine_how``)
    busiest_readers: tuple[str, ...] = ()  # the host's processes that read most in the window, by name

    @classmethod
    def between(cls, before: dict[str, Any], after: dict[str, Any]) -> Counts:
        read, written, on = _device_delta(before, after)
        return cls(
            device_read_bytes=read,
            device_written_bytes=written,
            engine_read_bytes=_engine_delta(before["engines"], after["engines"]),
            counted_on=on,
            page_cache_bytes_before=int(before["cached_bytes"]),
            page_cache_bytes_after=int(after["cached_bytes"]),
            load_avg_1m=after.get("load_avg_1m"),
            cpu_steal_share=_steal_share(before.get("cpu_ticks"), after.get("cpu_ticks")),
            engines_counted=tuple(engine_how(e) for e in after["engines"]),
            busiest_readers=busiest(before.get("readers") or {}, after.get("readers") or {}),
        )

    @property
    def host_load(self) -> str:
        """What else the host ran in the window, as one phrase: ``load 3.2 (1 min), CPU steal 4%``."""
        parts = [f"load {self.load_avg_1m:.1f} (1 min)" if self.load_avg_1m is not None else "load unknown"]
        if self.cpu_steal_share is not None:
            parts.append(f"CPU steal {self.cpu_steal_share:.0%}")
        readers = (
            f"; the host's busiest readers of any device: {', '.join(self.busiest_readers)}"
            if self.busiest_readers
            else ""
        )
        return ", ".join(parts) + readers

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _device_delta(before: dict[str, Any], after: dict[str, Any]) -> tuple[int | None, int | None, str]:
    if "devices" in before and "devices" in after:
        names = sorted(before["devices"])
        read = sum(after["devices"][n][0] - before["devices"][n][0] for n in names)
        written = sum(after["devices"][n][1] - before["devices"][n][1] for n in names)
        return read, written, "+".join(names)
    b, a = before.get("nfs"), after.get("nfs")
    if b and a:
        where = f"NFS server reads of {a['mount_point']}"
        read = a["counts"].get("server_read", 0) - b["counts"].get("server_read", 0)
        return read, a["counts"].get("server_write", 0) - b["counts"].get("server_write", 0), where
    return None, None, "no counter"


def engine_how(reads: dict[str, Any]) -> str:
    """One engine's count in words: ``cgroup /machine.slice/… io.stat, its reads of the volume's devices``."""
    if reads.get("scope") == "cgroup":
        which = "the volume's devices" if "volume_read_bytes" in reads else "every device"
        return f"cgroup {reads['where']} io.stat, its reads of {which}"
    how = f"{reads['where']}, read_bytes of /proc/<pid>/io"
    return f"{how} ({reads['fallback']})" if "fallback" in reads else how


def busiest(
    before: dict[str, list[Any]], after: dict[str, list[Any]], *, most: int = 3, least: int = 10_000_000
) -> tuple[str, ...]:
    """The processes that read most from storage between two ``process_reads``, each with its bytes;
    a process that ended inside the window is not seen (its reads count in its parent's once reaped).

    >>> busiest({"7": ["kworker/0:1-loop0", 10**9, 5]},
    ...         {"7": ["kworker/0:1-writeback", 31 * 10**9, 5], "9": ["python3", 5 * 10**7, 80]})
    ('kworker/0:1-writeback (pid 7) 30 GB', 'python3 (pid 9) 0.05 GB')
    """
    read = []
    for pid, (name, now, start) in after.items():
        was = before.get(pid)
        delta = now - was[1] if was and was[2] == start else now  # a new process (or a reused pid)
        if delta >= least:
            read.append((delta, name, pid))
    read.sort(reverse=True)
    return tuple(f"{name} (pid {pid}) {delta / 1e9:.3g} GB" for delta, name, pid in read[:most])


def _steal_share(before: list[int] | None, after: list[int] | None) -> float | None:
    """Stolen over all CPU ticks between two ``[total, steal]`` readings of /proc/stat."""
    if not before or not after or after[0] <= before[0]:
        return None
    return (after[1] - before[1]) / (after[0] - before[0])


def _engine_delta(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int | None:
    if not before or len(before) != len(after):
        return None
    total = 0
    for b, a in zip(before, after):  # noqa: B905 - python 3.8 zip takes no strict
        # the engine's reads of the volume where they can be told apart (io.stat), else all its reads
        key = "volume_read_bytes" if "volume_read_bytes" in a and "volume_read_bytes" in b else "read_bytes"
        if a[key] is None or b[key] is None:
            return None
        total += a[key] - b[key]
    return total


def _share(got: float, need: float) -> str:
    return f"{got / need:.0%}" if need else "n/a"


def cold_reason(
    counts: Counts,
    *,
    needed_bytes: int,
    what: str,
    caches_dropped: bool,
    engines: bool = False,
    min_ratio: float = MIN_COLD_RATIO,
) -> str | None:
    """Why ``what`` (a read of ``needed_bytes``) cannot count as served cold by the storage; None if it can.

    ``engines``: an engine did the reads, so its own counters must show them too.
    """
    reasons = [] if caches_dropped else [f"page cache not dropped before the {what}"]
    need, dev = min_ratio * needed_bytes, counts.device_read_bytes
    if dev is None:
        reasons.append(
            f"no block device or NFS counter carries the volume: nothing can prove the {what} cold"
        )
    elif dev < need:
        reasons.append(
            f"not cold: {counts.counted_on} read {dev} B of the {needed_bytes} B the {what} needed "
            f"({_share(dev, needed_bytes)} < {min_ratio:.0%})"
        )
    if engines and counts.engine_read_bytes is None:
        reasons.append("the engine's read counters could not be read (/proc/<pid>/io or its cgroup io.stat)")
    elif engines and counts.engine_read_bytes is not None and counts.engine_read_bytes < need:
        reasons.append(
            f"the engine read {counts.engine_read_bytes} B from storage of the {needed_bytes} B the {what} "
            f"needed ({_share(counts.engine_read_bytes, needed_bytes)} < {min_ratio:.0%})"
        )
    return "; ".join(reasons) or None
