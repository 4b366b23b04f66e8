"""Cold by construction, and proven: drop caches, count the volume's reads around the job.

A "cold" read is trusted only when the storage under the target served it: the
read bytes of the devices that carry the target's volume (or, on NFS, the bytes the
client read from the server) must account for at least ``MIN_COLD_RATIO`` of the
bytes fio read (LMCache #1522, dlio_benchmark #277: O_DIRECT flags silently fall back
to buffered I/O). The devices, counters and wording are :mod:`kvgate.probes.evidence`'s, run
on the host through :mod:`kvgate.probes.hostevidence`. Before every cold read, ``sync; echo
3 > /proc/sys/vm/drop_caches`` runs where kvgate may (root or sudo) and is recorded.
On NFS the server's own cache is made cold too, or the read is INVALID
(:mod:`kvgate.probes.nfs_server`). A buffered job whose working set is under 2 × host RAM is
INVALID outright: the page cache can hold it. Where caches cannot be dropped (no root, no sudo) that is
recorded and the counters alone decide. Other readers of the same devices can only
raise the count, so a proof can be fooled by concurrent load, never failed by it.

A run is also not a steady measurement of the volume when the kernel logged a storage event
during it (a multipath path lost or back, an NVMe-oF reconnect, an I/O error: the kinds of
:mod:`kvgate.probes.facts.kernlog`): the run is INVALID naming the first line, read (or why it
could not be) over the run's own window on the host's clock.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from kvgate.base.errors import CommandFailed, CommandTimeout
from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.inventory import Volume
from kvgate.probes.evidence import Counts, Resolved, cold_reason
from kvgate.probes.facts import ParseError, kernel_window
from kvgate.probes.fio.run import FioRun, RunOptions, lay_out, run_fio
from kvgate.probes.hostevidence import CacheDrop, HostEvidence
from kvgate.probes.nfs_server import ServerCold
from kvgate.transport import Executor

RAM_FACTOR = 2  # a buffered working set must exceed 2 × RAM to defeat the page cache


@dataclass(frozen=True)
class ColdProof:
    """The numbers that make a fio read cold, or the reasons it cannot be trusted."""

    volume: Resolved | None
    counts: Counts | None  # None: the job did not get as far as being measured
    fio_read_bytes: int
    drop: CacheDrop | None
    direct: bool
    working_set_bytes: int
    ram_bytes: int
    server: ServerCold | None = None  # NFS: what was done about the server's cache

    @property
    def device_read_bytes(self) -> int | None:
        return self.counts.device_read_bytes if self.counts else None

    def reasons(self) -> list[str]:
        out = []
        if not self.direct and self.working_set_bytes < RAM_FACTOR * self.ram_bytes:
            out.append(
                f"buffered job with a working set of {self.working_set_bytes} bytes < "
                f"{RAM_FACTOR} × host RAM ({self.ram_bytes} bytes): the page cache can serve it"
            )
        if self.counts is None:
            out.append("no counters were read around the job")
        elif self.fio_read_bytes:  # a refused drop is recorded; the counters alone decide
            why = cold_reason(
                self.counts, needed_bytes=self.fio_read_bytes, what="fio read", caches_dropped=True
            )
            out += [why] if why else []
        if self.server is not None and self.server.reason:
            out.append(self.server.reason)
        return out

    @property
    def invalid_reason(self) -> str | None:
        return "; ".join(self.reasons()) or None

    def to_json(self) -> dict[str, object]:
        """The proof as stored evidence."""
        return {
            "volume": self.volume.to_json() if self.volume else None,
            "counts": self.counts.to_json() if self.counts else None,
            "fio_read_bytes": self.fio_read_bytes,
            "drop_caches": self.drop.how if self.drop else "not requested (not a cold read)",
            "direct": self.direct,
            "working_set_bytes": self.working_set_bytes,
            "ram_bytes": self.ram_bytes,
            "nfs_server_cache": self.server.how if self.server else None,
            "invalid_reason": self.invalid_reason,
        }


@dataclass(frozen=True)
class MeasuredRun:
    """A fio run with the volume's counters around it, for reads the cold proof, and the kernel's
    storage lines of its window (``kernel``: kvgate.probes.facts.kernlog's, or why not read)."""

    run: FioRun
    proof: ColdProof
    layout: FioRun | None = None
    cold: bool = True
    kernel: dict[str, Any] | None = None

    @property
    def invalid_reason(self) -> str | None:
        if self.layout is not None and self.layout.invalid_reason:
            return f"layout failed: {self.layout.invalid_reason}"
        cold_proven = self.proof.invalid_reason if self.cold else None  # a write proves no cold read
        own = self.run.invalid_reason or cold_proven
        return "; ".join(r for r in (own, kernel_reason(self.kernel)) if r) or None


def kernel_reason(kernel: dict[str, Any] | None) -> str | None:
    """'the kernel logged 2 storage lines about the volume during the run, the first (NVMe) 1.2 s in: …'."""
    lines = (kernel or {}).get("volume_lines") or []
    if not lines or kernel is None:
        return None
    first = lines[0]
    n = f"{len(lines)} storage lines" if len(lines) > 1 else "a storage line"
    return (
        f"the kernel logged {n} about the volume's devices during the run, the first ({first['kind']}) "
        f"{first['time_unix_s'] - float(kernel['since_unix_s']):.1f} s in: {first['line'][:160]}: "
        "not a steady measurement of the volume"
    )


def kernel_lines(
    ex: Executor, vol: Resolved | None, *, since: float, until: float, sudo: bool
) -> dict[str, Any]:
    """The kernel's storage lines of a run's window, those naming the volume's devices or their NVMe
    controllers apart (``volume_lines``: the only ones that judge the run). An unreadable log is said
    (``error``, as G4's kernel log says it), not a failure; a lost link or Ctrl-C still stops the run."""
    try:
        log = kernel_window(ex, since=since, until=until, sudo=sudo)
    except (CommandFailed, CommandTimeout, ParseError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300], "since_unix_s": since, "lines": []}
    return on_volume(log, vol)


def on_volume(log: dict[str, Any], vol: Resolved | None) -> dict[str, Any]:
    """The log with the lines that name the volume's devices or controllers apart (``volume_lines``)."""
    names = device_names(vol)
    ours = re.compile(rf"\b({'|'.join(map(re.escape, names))})\b") if names else None
    return log | {"volume_lines": [x for x in log["lines"] if ours and ours.search(x["line"])]}


def device_names(vol: Resolved | None) -> list[str]:
    """The volume's block devices and, for NVMe, their controllers as the kernel names them in its
    lines: nvme1c2n1 is controller nvme2's path under subsystem 1's head nvme1n1 (whose number is the
    subsystem's, not a controller's); without paths, nvme0n1 is controller nvme0's namespace.

    >>> device_names(Resolved("nvme1n1", ("nvme1c2n1", "nvme1c3n1"), "nvme-multipath", "ext4", "/", ""))
    ['nvme1c2n1', 'nvme1c3n1', 'nvme1n1', 'nvme2', 'nvme3']
    >>> device_names(Resolved("nvme0n1p1", ("nvme0n1",), "partition", "ext4", "/", ""))
    ['nvme0n1', 'nvme0n1p1', 'nvme0']
    """
    if vol is None:
        return []
    devices = sorted({*vol.carriers, *((vol.head,) if vol.head else ())})
    found = [m for d in devices if (m := re.match(r"nvme(\d+)(?:c(\d+))?n\d+", d))]
    paths = [f"nvme{m[2]}" for m in found if m[2]]
    controllers = paths or [f"nvme{m[1]}" for m in found]
    return list(dict.fromkeys([*devices, *sorted(controllers)]))


def run_measured(
    ex: Executor, job: FioJob, volume: Volume, opts: RunOptions | None = None, *, cold: bool | None = None
) -> MeasuredRun:
    """Lay out, drop caches (cold reads), count the volume's bytes around the job, run it, prove it."""
    opts, cold = opts or RunOptions(), job.reads if cold is None else cold
    he = HostEvidence(ex, sudo=opts.sudo)
    raw_device = ex.run("test -b %s", job.target).ok
    layout = lay_out(ex, job, volume, opts) if job.reads and not raw_device else None
    if layout is not None and layout.invalid_reason:
        return MeasuredRun(layout, _proof(layout, None, None, None, 0), layout, cold)
    vol = he.resolve(job.target if raw_device else job.directory or posixpath.dirname(job.target))
    drop = he.drop() if cold else None
    server = _server_cold(opts, job) if cold and vol is not None and vol.kind == "nfs" else None
    before = he.snapshot(vol)
    run = run_fio(ex, job, volume, opts)
    after = he.snapshot(vol)
    proof = _proof(run, vol, Counts.between(before, after), drop, after["mem_total_bytes"])
    kernel = kernel_lines(ex, vol, since=before["t_unix_s"], until=after["t_unix_s"], sudo=opts.sudo)
    return MeasuredRun(run, dataclasses.replace(proof, server=server), layout, cold, kernel)


def _server_cold(opts: RunOptions, job: FioJob) -> ServerCold:
    if opts.server_cache is None:
        return ServerCold(False, "this run was given no control of the server (kvgate.probes.nfs_server)")
    return opts.server_cache.make_cold(data_bytes=job.working_set_bytes)


def _proof(
    run: FioRun, vol: Resolved | None, counts: Counts | None, drop: CacheDrop | None, ram: int
) -> ColdProof:
    fio_read = run.result.summary().read.io_bytes if run.result else 0
    job = run.job
    return ColdProof(vol, counts, fio_read, drop, job.direct, job.working_set_bytes, ram)
