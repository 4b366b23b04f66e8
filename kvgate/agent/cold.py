"""Make the page cache cold and prove it: drop caches, device read counters, Cached bytes.

"Cold" is proven, not assumed (LMCache #1522, dlio_benchmark #277): around a
measured window we record the read bytes of the block device behind the target
(``/proc/diskstats``; sectors are always 512 bytes there) and ``Cached`` from
``/proc/meminfo``. The device is resolved from ``os.stat(path).st_dev`` through
``/sys/dev/block/MAJ:MIN`` (a partition, a dm-N or an mdN is used as such), or
from the mount source in ``/proc/self/mountinfo`` when st_dev is anonymous
(btrfs, overlay); NFS/tmpfs have no device and say so.
"""

from __future__ import annotations

import os
import time
from typing import Any

from kvgate.agent.events import EventLog

DROP_CACHES = "/proc/sys/vm/drop_caches"
SECTOR_BYTES = 512


def drop_caches(enabled: bool = True) -> dict[str, Any]:
    """sync, then drop page cache, dentries and inodes if we may; says what happened."""
    if not enabled:
        return {"requested": False, "done": False, "error": "disabled by the spec"}
    start = time.monotonic()
    os.sync()
    try:
        with open(DROP_CACHES, "w") as f:
            f.write("3\n")
    except OSError as exc:
        return {"requested": True, "done": False, "error": f"{DROP_CACHES}: {exc.strerror}"}
    return {"requested": True, "done": True, "error": None, "duration_s": time.monotonic() - start}


def _sys_block(major: int, minor: int) -> dict[str, Any] | None:
    """Name the block device MAJ:MIN from sysfs: itself, its whole disk, its dm name and slaves."""
    link = f"/sys/dev/block/{major}:{minor}"
    if not os.path.exists(link):
        return None
    real = os.path.realpath(link)
    name = os.path.basename(real)
    info: dict[str, Any] = {"name": name, "dev": f"{major}:{minor}", "sysfs": real, "disk": name}
    if os.path.exists(os.path.join(real, "partition")):
        info["kind"], info["disk"] = "partition", os.path.basename(os.path.dirname(real))
    elif os.path.exists(os.path.join(real, "dm", "name")):
        with open(os.path.join(real, "dm", "name")) as f:
            info["kind"], info["dm_name"] = "dm", f.read().strip()
    elif os.path.exists(os.path.join(real, "md")):
        info["kind"] = "md"
    else:
        info["kind"] = "disk"
    slaves = os.path.join(real, "slaves")
    if os.path.isdir(slaves):
        info["slaves"] = sorted(os.listdir(slaves))
    return info


def _mount_of(path: str) -> tuple[str, str, str] | None:
    """(mount point, fs type, source) of the longest mountinfo mount point containing ``path``."""
    best: tuple[str, str, str] | None = None
    real = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            point = left.split()[4].replace("\\040", " ")
            fstype, source = [*right.split(), "", ""][:2]
            inside = real == point or real.startswith(point.rstrip("/") + "/")
            if inside and (best is None or len(point) >= len(best[0])):
                best = (point, fstype, source)
    return best


def resolve_device(path: str) -> dict[str, Any]:
    """The block device whose diskstats line counts reads of files under ``path``."""
    dev = os.stat(path).st_dev
    major, minor = os.major(dev), os.minor(dev)
    info = _sys_block(major, minor) if major else None
    if info is not None:
        info["resolved_via"] = f"st_dev {major}:{minor} -> {info['sysfs']}"
        return info
    mount = _mount_of(path)
    if mount and mount[2].startswith("/dev/"):
        rdev = os.stat(mount[2]).st_rdev
        info = _sys_block(os.major(rdev), os.minor(rdev))
        if info is not None:
            info["resolved_via"] = f"st_dev {major}:{minor} is anonymous; mount source {mount[2]}"
            return info
    fstype = mount[1] if mount else "unknown"
    return {
        "name": None,
        "dev": f"{major}:{minor}",
        "kind": "none",
        "resolved_via": f"no block device behind {path} (file system {fstype})",
    }


def device_read_bytes(name: str | None) -> int | None:
    """Bytes read from the named device so far (diskstats sectors × 512), None if unknown."""
    if not name:
        return None
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 5 and fields[2] == name:
                return int(fields[5]) * SECTOR_BYTES
    return None


def page_cache_bytes() -> int:
    """``Cached`` from /proc/meminfo, in bytes."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Cached:"):
                return int(line.split()[1]) * 1024
    raise OSError("no Cached line in /proc/meminfo")


class ColdWindow:
    """Counters bracketing one measured read window; ``end()`` returns the cold proof.

    >>> window = ColdWindow(resolve_device("/"), drop={"requested": False, "done": False})
    >>> window.begin()
    >>> sorted(window.end(1 << 20))[:3]
    ['device', 'device_read_bytes', 'device_read_ratio']
    """

    def __init__(self, device: dict[str, Any], drop: dict[str, Any]) -> None:
        self.device, self.drop = device, drop
        self._before: int | None = None
        self._after: int | None = None
        self._cached: tuple[int, int] = (0, 0)

    def begin(self) -> None:
        """Snapshot the counters just before the measured reads."""
        self._cached = (page_cache_bytes(), 0)
        self._before = device_read_bytes(self.device.get("name"))

    def end(self, expected_read_bytes: int) -> dict[str, Any]:
        """Snapshot after the reads; returns the cold proof for ``expected_read_bytes``."""
        self._after = device_read_bytes(self.device.get("name"))
        self._cached = (self._cached[0], page_cache_bytes())
        read = None
        if self._before is not None and self._after is not None:
            read = self._after - self._before
        return {
            "drop_caches": self.drop,
            "device": self.device,
            "device_read_bytes": read,
            "expected_read_bytes": expected_read_bytes,
            "device_read_ratio": (read / expected_read_bytes)
            if read is not None and expected_read_bytes
            else None,
            "page_cache_bytes_before": self._cached[0],
            "page_cache_bytes_after": self._cached[1],
        }


def cold_window(path: str, *, drop: bool, log: EventLog) -> ColdWindow:
    """Drop caches (if enabled and permitted; a refusal is a note event), then open a window on the device."""
    result = drop_caches(drop)
    if result["requested"] and not result["done"]:
        log.emit("note", message=f"page cache not dropped ({result['error']}): cold rests on O_DIRECT")
    window = ColdWindow(resolve_device(path), result)
    window.begin()
    return window
