"""Cold by construction, and proven: drop caches, count device reads around the job.

A "cold" read is trusted only when the device under the target served it: the
read bytes of the backing block device (/proc/diskstats, resolved from the
target's mount through its MAJ:MIN) must account for at least ``min_ratio`` of
the bytes fio read (LMCache #1522, dlio_benchmark #277: O_DIRECT flags silently
fall back to buffered I/O). Before every cold read, ``sync; echo 3 >
/proc/sys/vm/drop_caches`` runs where kvgate may (root or sudo) and is recorded.
A buffered job whose working set is under 2 × host RAM is INVALID outright: the
page cache can hold it. Where caches cannot be dropped (no root, no sudo) that
is recorded and the device counters alone decide. Other readers of the same
device can only raise the device count, so a proof can be fooled by concurrent
load, never failed by it. A target without a local block device (NFS, tmpfs)
cannot be proven cold this way and is INVALID for cold reads.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from kvgate.fio.job import FioJob
from kvgate.fio.run import FioRun, RunOptions, lay_out, run_fio
from kvgate.inventory.schema import Volume
from kvgate.transport.base import Executor

SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size
MIN_COLD_RATIO = 0.9
RAM_FACTOR = 2  # a buffered working set must exceed 2 × RAM to defeat the page cache


@dataclass(frozen=True)
class BlockDevice:
    """The block device whose counters stand for a target."""

    major: int
    minor: int
    name: str  # kernel name, as in /proc/diskstats (vda, nvme0n1, dm-3)


@dataclass(frozen=True)
class DiskCounters:
    read_bytes: int
    written_bytes: int


@dataclass(frozen=True)
class CacheDrop:
    """What happened when kvgate tried to empty the page cache."""

    dropped: bool
    how: str  # "root", "sudo" or why not
    cached_before_bytes: int
    cached_after_bytes: int


def parse_diskstats(text: str) -> dict[tuple[int, int], tuple[str, DiskCounters]]:
    """/proc/diskstats → {(major, minor): (name, counters)}."""
    out: dict[tuple[int, int], tuple[str, DiskCounters]] = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 10:
            counters = DiskCounters(int(f[5]) * SECTOR_BYTES, int(f[9]) * SECTOR_BYTES)
            out[(int(f[0]), int(f[1]))] = (f[2], counters)
    return out


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo → bytes per field."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts:
            out[key] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return out


def backing_device(ex: Executor, path: str) -> BlockDevice | None:
    """The block device holding ``path`` (itself when it is a device); None for NFS, tmpfs, …"""
    if ex.run("test -b %s", path).ok:
        majmin = ex.run("lsblk -dn -o MAJ:MIN %s", path, check=True).stdout.strip()
    else:
        majmin = ex.run("findmnt -n -r -o MAJ:MIN -T %s", path, check=True).stdout.strip()
    major, _, minor = majmin.partition(":")
    stats = parse_diskstats(ex.run("cat /proc/diskstats", check=True).stdout)
    found = stats.get((int(major), int(minor)))
    return BlockDevice(int(major), int(minor), found[0]) if found else None


def read_counters(ex: Executor, dev: BlockDevice) -> DiskCounters:
    stats = parse_diskstats(ex.run("cat /proc/diskstats", check=True).stdout)
    return stats[(dev.major, dev.minor)][1]


def host_ram_bytes(ex: Executor) -> int:
    return parse_meminfo(ex.run("cat /proc/meminfo", check=True).stdout)["MemTotal"]


def drop_caches(ex: Executor, *, sudo: bool) -> CacheDrop:
    """``sync; echo 3 > /proc/sys/vm/drop_caches`` as root, or via sudo when allowed."""
    before = parse_meminfo(ex.run("cat /proc/meminfo", check=True).stdout)["Cached"]
    root = ex.run("id -u").stdout.strip() == "0"
    if not (root or sudo):
        return CacheDrop(False, "not root and sudo not allowed", before, before)
    res = ex.run("sync && echo 3 > /proc/sys/vm/drop_caches", sudo=not root)
    after = parse_meminfo(ex.run("cat /proc/meminfo", check=True).stdout)["Cached"]
    how = ("root" if root else "sudo") if res.ok else f"failed: {res.tail(2)}"
    return CacheDrop(res.ok, how, before, after)


@dataclass(frozen=True)
class ColdProof:
    """The numbers that make a read cold, or the reasons it cannot be trusted."""

    device: BlockDevice | None
    before: DiskCounters | None
    after: DiskCounters | None
    fio_read_bytes: int
    drop: CacheDrop | None
    direct: bool
    working_set_bytes: int
    ram_bytes: int
    min_ratio: float = MIN_COLD_RATIO

    @property
    def device_read_bytes(self) -> int | None:
        return self.after.read_bytes - self.before.read_bytes if self.after and self.before else None

    def reasons(self) -> list[str]:
        out = []
        if not self.direct and self.working_set_bytes < RAM_FACTOR * self.ram_bytes:
            out.append(
                f"buffered job with a working set of {self.working_set_bytes} bytes < "
                f"{RAM_FACTOR} × host RAM ({self.ram_bytes} bytes): the page cache can serve it"
            )
        dev_bytes = self.device_read_bytes
        if dev_bytes is None:
            out.append("no local block device backs the target: device reads cannot prove the read cold")
        elif self.fio_read_bytes and dev_bytes < self.min_ratio * self.fio_read_bytes:
            out.append(
                f"not cold: {self.device.name if self.device else '?'} read {dev_bytes} bytes while fio read "
                f"{self.fio_read_bytes} bytes ({dev_bytes / self.fio_read_bytes:.0%} < {self.min_ratio:.0%})"
            )
        return out

    @property
    def invalid_reason(self) -> str | None:
        return "; ".join(self.reasons()) or None


@dataclass(frozen=True)
class MeasuredRun:
    """A fio run with the device counters around it and, for reads, the cold proof."""

    run: FioRun
    proof: ColdProof
    layout: FioRun | None = None
    cold: bool = True

    @property
    def invalid_reason(self) -> str | None:
        if self.layout is not None and self.layout.invalid_reason:
            return f"layout failed: {self.layout.invalid_reason}"
        if self.run.invalid_reason or not self.cold:
            return self.run.invalid_reason
        return self.proof.invalid_reason


def run_measured(
    ex: Executor, job: FioJob, volume: Volume, opts: RunOptions | None = None, *, cold: bool | None = None
) -> MeasuredRun:
    """Lay out, drop caches (cold reads), count device bytes around the job, run it, prove it."""
    opts, cold = opts or RunOptions(), job.reads if cold is None else cold
    raw_device = ex.run("test -b %s", job.target).ok
    layout = lay_out(ex, job, volume, opts) if job.reads and not raw_device else None
    if layout is not None and layout.invalid_reason:
        return MeasuredRun(layout, _proof(ex, layout), layout, cold)
    dev = backing_device(ex, job.target if raw_device else job.directory or posixpath.dirname(job.target))
    drop = drop_caches(ex, sudo=opts.sudo) if cold else None
    before = read_counters(ex, dev) if dev else None
    run = run_fio(ex, job, volume, opts)
    after = read_counters(ex, dev) if dev else None
    return MeasuredRun(run, _proof(ex, run, dev=dev, before=before, after=after, drop=drop), layout, cold)


def _proof(
    ex: Executor,
    run: FioRun,
    *,
    dev: BlockDevice | None = None,
    before: DiskCounters | None = None,
    after: DiskCounters | None = None,
    drop: CacheDrop | None = None,
) -> ColdProof:
    fio_read = run.result.summary().read.io_bytes if run.result else 0
    job, ram = run.job, host_ram_bytes(ex)
    return ColdProof(dev, before, after, fio_read, drop, job.direct, job.working_set_bytes, ram)
