"""A path on a volume → the block devices whose counters count its I/O exactly once.

The device a file system sits on is not always the one that counts its reads:

- a disk, partition or loop device counts its own I/O;
- an NVMe native-multipath head (``nvme2n1``, NVMe-oF with several paths) had no I/O
  accounting before ~6.2-era kernels: the bytes appear on its hidden path devices
  ``nvme2c1n1``, ``nvme2c2n1`` (atop PR #157 and fio PR #549 met it). Recent kernels
  link them in ``<head>/multipath/``; older ones (5.15) only list them beside the head
  in ``/sys/class/block``, named ``nvme<subsystem>c<controller>n<namespace>``. A
  partition of such a head counts nothing either;
- device-mapper (dm-multipath, LVM) and md RAID stack on ``slaves/``: the leaves
  carry the I/O, resolved recursively (an LV on a multipath head on two paths).

Summing the leaves can only over-count when the same leaves carry other I/O (other
partitions, other LVs): a proof can be fooled by concurrent load, never failed by it.
Every function takes the sysfs/proc roots, so a recorded or constructed tree tests it.

>>> Resolved("vda", ("vda",), "disk", "ext4", "/", "/dev/vda").to_json()["carriers"]
['vda']
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import asdict, dataclass
from typing import Any

NFS_TYPES = ("nfs", "nfs4")
_OCTAL = re.compile(r"\\([0-7]{3})")
_NVME_HEAD = re.compile(r"nvme(\d+)n(\d+)")
MAX_DEPTH = 8  # a stack deeper than this is a loop in a broken tree, not a lab


class DeviceError(Exception):
    """The path or device cannot be resolved to a block device; the message says why."""


@dataclass(frozen=True)
class Resolved:
    """Where a path's I/O is counted."""

    head: str | None  # kernel name of the device the file system sits on; None: no block device
    carriers: tuple[str, ...]  # kernel names whose counters carry its I/O, each once
    kind: str  # disk | partition | loop | nvme-multipath | dm | md | nfs | none
    fstype: str
    mount_point: str
    source: str  # the mount source: /dev/..., server:/export
    # on a virtual machine, the disks a hypervisor presents, whose cache no counter here sees (guest_disks)
    virtual: str = ""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "carriers": list(self.carriers)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Resolved:
        return cls(**{**data, "carriers": tuple(data["carriers"])})

    @property
    def how(self) -> str:
        """One line for the report: what the volume is and which counters stand for it."""
        if self.kind == "nfs":
            return f"{self.mount_point} is NFS from {self.source}: its client counters (mountstats)"
        if not self.carriers:
            return f"{self.mount_point} ({self.fstype}) has no block device"
        via = "" if self.carriers == (self.head,) else f" counted on {', '.join(self.carriers)}"
        return f"{self.mount_point} on {self.head} ({self.kind}){via}"


def device_numbers(names: tuple[str, ...], *, sys_root: str = "/sys") -> tuple[str, ...]:
    """``MAJ:MIN`` as cgroup ``io.stat`` keys each device's I/O: a disk's own; a partition's disk
    (io.stat counts per disk); none for a native multipath path (``nvme0c0n1`` has no number)."""
    out = []
    for name in names:
        base = os.path.realpath(os.path.join(sys_root, "class", "block", name))
        if os.path.exists(os.path.join(base, "partition")):
            base = os.path.dirname(base)
        try:
            with open(os.path.join(base, "dev")) as f:
                out.append(f.read().strip())
        except OSError:
            continue
    return tuple(dict.fromkeys(out))


def carriers(name: str, *, sys_root: str = "/sys") -> tuple[str, tuple[str, ...]]:
    """(kind, leaf devices) of the block device ``name`` (e.g. ``nvme2n1``, ``dm-3``, ``vda1``)."""
    return _carriers(name, sys_root, 0)


def _carriers(name: str, sys_root: str, depth: int) -> tuple[str, tuple[str, ...]]:
    base = os.path.join(sys_root, "class", "block", name)
    if depth > MAX_DEPTH:
        raise DeviceError(f"{name}: block devices stacked deeper than {MAX_DEPTH} (a loop in sysfs?)")
    if not os.path.exists(base):
        raise DeviceError(f"no block device {name} in {os.path.join(sys_root, 'class', 'block')}")
    paths = _nvme_paths(name, base, sys_root)
    if paths:
        return "nvme-multipath", paths
    slaves = _entries(os.path.join(base, "slaves"))
    if slaves:
        kind = "dm" if os.path.exists(os.path.join(base, "dm")) else "md"
        leaves = [leaf for s in slaves for leaf in _carriers(s, sys_root, depth + 1)[1]]
        return kind, tuple(sorted(set(leaves)))
    if os.path.exists(os.path.join(base, "partition")):
        parent = os.path.basename(os.path.dirname(os.path.realpath(base)))
        parent_kind, parent_leaves = _carriers(parent, sys_root, depth + 1)
        if parent_kind == "nvme-multipath":  # the head counts nothing, nor do its partitions
            return "nvme-multipath", parent_leaves
        return "partition", (name,)
    return ("loop" if name.startswith("loop") else "disk"), (name,)


def _nvme_paths(name: str, base: str, sys_root: str) -> tuple[str, ...]:
    """The path devices of an NVMe multipath head: ``multipath/`` links, else the ``nvmeXcYnZ`` names."""
    linked = _entries(os.path.join(base, "multipath"))
    head = _NVME_HEAD.fullmatch(name)
    if linked or head is None:
        return linked
    path = re.compile(rf"nvme{head[1]}c\d+n{head[2]}")
    return tuple(n for n in _entries(os.path.join(sys_root, "class", "block")) if path.fullmatch(n))


def _entries(directory: str) -> tuple[str, ...]:
    try:
        return tuple(sorted(os.listdir(directory)))
    except OSError:
        return ()


def device_name(major: int, minor: int, *, sys_root: str = "/sys") -> str:
    """The kernel name of block device MAJ:MIN (``/sys/dev/block/MAJ:MIN``)."""
    link = os.path.join(sys_root, "dev", "block", f"{major}:{minor}")
    if not os.path.exists(link):
        raise DeviceError(f"no block device {major}:{minor} in {os.path.dirname(link)}")
    return os.path.basename(os.path.realpath(link))


def mount_of(path: str, *, proc_root: str = "/proc") -> tuple[str, str, str]:
    """(mount point, file system type, source) of the longest mount point containing ``path``."""
    best = ("", "unknown", "")
    real = os.path.realpath(path)
    with open(os.path.join(proc_root, "self", "mountinfo")) as f:
        for line in f:
            left, _, right = line.partition(" - ")
            point = _unescape(left.split()[4])
            fstype, source = [*right.split(), "", ""][:2]
            inside = real == point or real.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best[0]):
                best = (point, fstype, _unescape(source))
    return best


def _unescape(text: str) -> str:
    """mountinfo's octal escapes (``\\040`` is a space)."""
    return _OCTAL.sub(lambda m: chr(int(m[1], 8)), text)


def resolve(path: str, *, sys_root: str = "/sys", proc_root: str = "/proc") -> Resolved:
    """Where the I/O of files under ``path`` (or of the block device ``path``) is counted."""
    st = os.stat(path)
    if stat.S_ISBLK(st.st_mode):
        raw = device_name(os.major(st.st_rdev), os.minor(st.st_rdev), sys_root=sys_root)
        kind, leaves = carriers(raw, sys_root=sys_root)
        return Resolved(raw, leaves, kind, "raw", path, path)
    point, fstype, source = mount_of(path, proc_root=proc_root)
    if fstype in NFS_TYPES:
        return Resolved(None, (), "nfs", fstype, point, source)
    head = _device_of(st.st_dev, source, sys_root)
    if head is None:
        return Resolved(None, (), "none", fstype, point, source)
    kind, leaves = carriers(head, sys_root=sys_root)
    return Resolved(head, leaves, kind, fstype, point, source, guest_disks(leaves, sys_root, proc_root))


def guest_disks(leaves: tuple[str, ...], sys_root: str = "/sys", proc_root: str = "/proc") -> str:
    """On a virtual machine (the CPU flags name a hypervisor), the volume's disks with their drivers:
    a read this guest's counters call cold may have come from the hypervisor's page cache, which no
    counter here sees ('' on bare metal). A reader took a virtio disk's 4.4 GB/s for the disk's own."""
    try:
        with open(os.path.join(proc_root, "cpuinfo")) as f:
            if not any(line.startswith("flags") and " hypervisor" in line for line in f):
                return ""
    except OSError:
        return ""
    disks = [f"{leaf} ({_driver(leaf, sys_root)})" for leaf in leaves]
    return f"a virtual machine's disk: {', '.join(disks)}"


def _driver(leaf: str, sys_root: str) -> str:
    """The kernel driver of a block device ('virtio_blk', 'nvme'), or what the device is when it has none."""
    if leaf.startswith("loop"):
        return "a loop device over a file of this guest's"
    link = os.path.join(sys_root, "block", leaf, "device", "driver")
    if os.path.islink(link):
        return os.path.basename(os.readlink(link))
    parent = os.path.join(sys_root, "block", leaf, "device", "device", "driver")  # an NVMe namespace's
    return os.path.basename(os.readlink(parent)) if os.path.islink(parent) else "driver unknown"


def _device_of(st_dev: int, source: str, sys_root: str) -> str | None:
    """The device behind st_dev; for an anonymous one (btrfs, overlay), the mount source's."""
    if os.major(st_dev):
        try:
            return device_name(os.major(st_dev), os.minor(st_dev), sys_root=sys_root)
        except DeviceError:
            pass
    if source.startswith("/dev/") and os.path.exists(source):
        rdev = os.stat(source).st_rdev
        return device_name(os.major(rdev), os.minor(rdev), sys_root=sys_root)
    return None
