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
    cached_before = meminfo_bytes("Cached")
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
        }
    return {
        "done": True,
        "error": None,
        "duration_s": time.monotonic() - start,
        "cached_before_bytes": cached_before,
        "cached_after_bytes": meminfo_bytes("Cached"),
    }
