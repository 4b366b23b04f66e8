"""Device read/write bytes by kernel name, the page cache, and dropping it.

/proc/diskstats counts 512-byte sectors whatever the device's block size. Devices
are looked up by name, not MAJ:MIN: hidden NVMe multipath path devices are listed
there as ``0 0 nvme0c0n1`` (atop PR #157).

>>> stats = parse_diskstats("0 0 nvme0c0n1 10 0 80 0 2 0 16 0 0 0 0\\n259 1 nvme0n1 0 0 0 0 0 0 0 0 0 0 0")
>>> stats["nvme0c0n1"], stats["nvme0n1"]
((40960, 8192), (0, 0))
"""

from __future__ import annotations

import os
import time
from typing import Any

SECTOR_BYTES = 512
DROP_CACHES = "/proc/sys/vm/drop_caches"
ARCSTATS = "spl/kstat/zfs/arcstats"  # under /proc where OpenZFS is loaded


class CounterError(Exception):
    """A counter the proof needs cannot be read; the message names it."""


def parse_diskstats(text: str) -> dict[str, tuple[int, int]]:
    """/proc/diskstats → {kernel name: (read bytes, written bytes)}."""
    out: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 10 and f[5].isdigit() and f[9].isdigit():
            out[f[2]] = (int(f[5]) * SECTOR_BYTES, int(f[9]) * SECTOR_BYTES)
    return out


def device_bytes(names: tuple[str, ...], *, proc_root: str = "/proc") -> dict[str, tuple[int, int]]:
    """(read bytes, written bytes) so far of each named device; a missing one is an error."""
    with open(os.path.join(proc_root, "diskstats")) as f:
        stats = parse_diskstats(f.read())
    missing = [n for n in names if n not in stats]
    if missing:
        raise CounterError(f"no line for {', '.join(missing)} in {os.path.join(proc_root, 'diskstats')}")
    return {n: stats[n] for n in names}


def meminfo_bytes(field: str, *, proc_root: str = "/proc") -> int:
    """One /proc/meminfo field in bytes (``Cached``, ``MemTotal``)."""
    with open(os.path.join(proc_root, "meminfo")) as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key == field:
                parts = rest.split()
                return int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    raise CounterError(f"no {field} line in {os.path.join(proc_root, 'meminfo')}")


def zfs_arc_data_bytes(*, proc_root: str = "/proc") -> int | None:
    """File data in OpenZFS's ARC (``data_size``; ``size`` on releases without it); None: no ZFS.

    The ARC is DRAM outside the page cache: ``drop_caches`` shrinks it only as far as its
    shrinker chooses, so a drop on a ZFS filer is proven by this figure, not by ``Cached``.

    >>> import tempfile, pathlib; d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "spl/kstat/zfs").mkdir(parents=True)
    >>> _ = (d / ARCSTATS).write_text(
    ...     "13 1 0x01 123 33456 8402944205 632568437854307\\nname                            type data\\n"
    ...     "size                            4    11675997984\\n"
    ...     "data_size                       4    9663676416\\n")
    >>> zfs_arc_data_bytes(proc_root=str(d)), zfs_arc_data_bytes(proc_root=f"{d}/none")
    (9663676416, None)
    """
    try:
        with open(os.path.join(proc_root, ARCSTATS)) as f:
            rows = dict(line.split()[0::2] for line in f.read().splitlines()[2:] if len(line.split()) == 3)
    except OSError:
        return None
    value = rows.get("data_size", rows.get("size"))
    return int(value) if value is not None and value.isdigit() else None


def load_average(*, proc_root: str = "/proc") -> float | None:
    """The host's 1-minute load average (/proc/loadavg); None where it cannot be read."""
    try:
        with open(os.path.join(proc_root, "loadavg")) as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def cpu_ticks(*, proc_root: str = "/proc") -> list[int] | None:
    """[all CPU ticks, stolen ticks] so far from /proc/stat's ``cpu`` line; None where unreadable.

    >>> import tempfile, pathlib; d = tempfile.mkdtemp()
    >>> _ = pathlib.Path(d, "stat").write_text("cpu  10 0 5 80 1 0 0 4 0 0\\ncpu0 1 0 0 0 0 0 0 0 0 0\\n")
    >>> cpu_ticks(proc_root=d)
    [100, 4]
    """
    try:
        with open(os.path.join(proc_root, "stat")) as f:
            fields = f.readline().split()
        ticks = [int(v) for v in fields[1:9]]  # user .. steal; guest time is inside user already
        return [sum(ticks), ticks[7]] if fields[0] == "cpu" and len(ticks) == 8 else None
    except (OSError, ValueError, IndexError):
        return None


def drop_caches() -> dict[str, Any]:
    """sync, then drop the page cache, dentries and inodes (needs root); says what happened.

    The outcome, not an exception: a refusal is evidence too (the proof then rests on
    the device counters alone).
    """
    cached_before, arc_before = meminfo_bytes("Cached"), zfs_arc_data_bytes()
    start = time.monotonic()
    os.sync()
    try:
        with open(DROP_CACHES, "w") as f:
            f.write("3\n")
    except OSError as exc:
        return {
            "done": False,
            "error": f"{DROP_CACHES}: {exc.strerror}",
            "cached_before_bytes": cached_before,
            "arc_data_before_bytes": arc_before,
        }
    return {
        "done": True,
        "error": None,
        "duration_s": time.monotonic() - start,
        "cached_before_bytes": cached_before,
        "cached_after_bytes": meminfo_bytes("Cached"),
        "arc_data_before_bytes": arc_before,
        "arc_data_after_bytes": zfs_arc_data_bytes(),
    }
