"""Side-by-side storage benchmarks: kvgate's agent workloads against fio on one file system.

Every comparison runs its arms in turn (A B, B A, A B, B A: the order
alternates and, with an even number of pairs, each arm goes first equally
often), rests between runs (the VM disk refills a burst budget), drops the
page cache before every cold run, and judges the median of the pair ratios by
its 95 % interval (interval.py): met, not met, or undecided, in which case it runs
more pairs within a time budget. A pair disturbed by other I/O on the device or by
the hypervisor is shown flagged and left out of the verdict.
Each run is one ``Run``: bytes over the measured window as the arm itself
defines it (the agent's read or write window, fio's job runtime).

>>> same = (Run(2e9, 2.0),) * 6
>>> c = Comparison("demo", "agent", "fio", 0.95, (Run(2.1e9, 2.0), *same[1:]), same)
>>> c.verdict.verdict, round(c.ratio, 3)
('met', 1.0)
>>> Comparison("demo", "agent", "fio", 0.95, same[:2], same[:2]).verdict.verdict  # 2 pairs decide nothing
'undecided'
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interval import PairVerdict, judge_pairs

from kvgate.base.errors import LabError
from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.inventory.schema import Volume
from kvgate.probes import agentctl
from kvgate.probes.evidence.blockdev import Resolved
from kvgate.probes.evidence.window import Counts
from kvgate.probes.fio.cold import run_measured
from kvgate.probes.fio.parse import DirectionStats, locate_json
from kvgate.probes.fio.run import run_fio
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.scratch import checked, create
from kvgate.probes.workload_results import cold_reason
from kvgate.transport.local import LocalExecutor

GB = 1e9
AGENT_TIMEOUT_S = 300.0
SETTLE_S = 1.0  # after a drop, the machine's other processes re-read their files: let that pass
FOREIGN_IO_SHARE = 0.25  # a device that moved this much more than the arm served another reader
STEAL_SHARE = 0.10  # the hypervisor took this much of the CPUs: the run measured the neighbours
EXTRA_PAIRS_BUDGET_S = 300.0  # an undecided comparison runs more pairs for at most this long


@dataclass(frozen=True)
class Run:
    """One measured run of one arm: bandwidth over its own measured window, and what else went on.

    ``own_io_bytes`` is what the arm itself moved to or from the device over the whole
    call (its set-up phases included); ``device_io_bytes`` what the device moved
    meanwhile, ``load_1min`` the load average as the run began, ``cpu_idle`` and
    ``cpu_steal`` the idle share of the CPUs and the share the hypervisor took over
    the call (set by ``Bench.observed``). A device that
    moved much more than the arm did served someone else too, and CPUs with no idle
    time starve the agent (Python, checksums) long before fio: evidence for
    reading a noisy pair, never a correction.
    """

    bytes_per_s: float
    seconds: float
    own_io_bytes: int = 0
    device_io_bytes: int | None = None
    load_1min: float | None = None
    cpu_idle: float | None = None  # share of all CPUs idle (incl. iowait) over the call
    cpu_steal: float | None = None  # share the hypervisor took from this VM over the call
    position: int | None = None  # 0 when this arm went first in its round
    own_figure_bytes_per_s: float | None = None  # the tool's own figure, where it uses another window

    @property
    def disturbed(self) -> str | None:
        """Why this run measured more than its arm (shown, and its pair left out of the verdict)."""
        foreign = self.foreign_io_bytes
        if foreign is not None and foreign > FOREIGN_IO_SHARE * self.own_io_bytes:
            return f"other device I/O {foreign / GB:.1f} GB"
        if self.cpu_steal is not None and self.cpu_steal > STEAL_SHARE:
            return f"CPU steal {self.cpu_steal:.0%}"
        return None

    @property
    def foreign_io_bytes(self) -> int | None:
        """Device bytes the arm did not account for (None when unknown)."""
        if self.device_io_bytes is None or not self.own_io_bytes:
            return None
        return max(0, self.device_io_bytes - self.own_io_bytes)

    def record(self) -> dict[str, Any]:
        return {
            "bytes_per_s": self.bytes_per_s,
            "seconds": self.seconds,
            "own_io_bytes": self.own_io_bytes,
            "device_io_bytes": self.device_io_bytes,
            "foreign_io_bytes": self.foreign_io_bytes,
            "load_1min": self.load_1min,
            "cpu_idle_fraction": self.cpu_idle,
            "cpu_steal_fraction": self.cpu_steal,
            "position_in_round": self.position,
            "disturbed": self.disturbed,
            "own_figure_bytes_per_s": self.own_figure_bytes_per_s,
        }


@dataclass(frozen=True)
class Comparison:
    """Subject vs baseline: is the median of ``subject / baseline`` within a pair ``≥ target``?"""

    name: str
    subject: str
    baseline: str
    target: float
    subject_runs: tuple[Run, ...]
    baseline_runs: tuple[Run, ...]
    knobs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.subject_runs or not self.baseline_runs:
            raise ValueError(f"{self.name}: a comparison needs runs of both arms")

    @property
    def pairs(self) -> list[tuple[Run, Run]]:
        return list(zip(self.subject_runs, self.baseline_runs, strict=True))

    @property
    def verdict(self) -> PairVerdict:
        """Judged on the undisturbed pairs only."""
        return judge_pairs(undisturbed_ratios(self.subject_runs, self.baseline_runs), target=self.target)

    @property
    def ratio(self) -> float:
        return self.verdict.median

    @property
    def met(self) -> bool:
        return self.verdict.verdict == "met"

    def condition(self) -> str:
        """The verdict line, for the assert message and the table."""
        return f"{self.name}: {self.subject} / {self.baseline} ≥ {self.target}: {self.verdict}"

    def record(self) -> dict[str, Any]:
        """Everything the JSON keeps: every run of each arm, the pair ratios, the verdict, the knobs."""
        v = self.verdict
        return {
            "subject": self.subject,
            "baseline": self.baseline,
            "subject_runs": [r.record() for r in self.subject_runs],
            "baseline_runs": [r.record() for r in self.baseline_runs],
            "pair_ratios": [a.bytes_per_s / b.bytes_per_s for a, b in self.pairs],
            "pairs_disturbed": sum(1 for a, b in self.pairs if a.disturbed or b.disturbed),
            "median_pair_ratio": v.median,
            "interval_95": [v.low, v.high],
            "target_ratio": self.target,
            "verdict": v.verdict,
            "pairs_needed": v.pairs_needed,
            "condition": self.condition(),
            "knobs": dict(self.knobs),
        }

    def table(self) -> str:
        """Plain text: a line per pair (order S→B or B→S; GB/s [other device I/O, load]; flag), verdict."""
        knobs = ", ".join(f"{k}={v}" for k, v in self.knobs.items())
        lines = [f"{self.name}  ({knobs})", f"  pair     {self.subject:>30}  {self.baseline:>30}   ratio"]
        for i, (a, b) in enumerate(self.pairs, 1):
            first = "S→B" if (a.position or 0) < (b.position or 0) else "B→S"
            flag = a.disturbed or b.disturbed
            ratio = f"{a.bytes_per_s / b.bytes_per_s:6.3f}" + (
                f"  disturbed: {flag} (not counted)" if flag else ""
            )
            lines.append(f"  {i:>2} {first}  {_cell(a):>30}  {_cell(b):>30}  {ratio}")
        lines.append(f"  {self.verdict.verdict.upper()}  {self.condition()}")
        return "\n".join(lines)


def undisturbed_ratios(subject: Sequence[Run], baseline: Sequence[Run]) -> list[float]:
    """subject / baseline within each pair where neither run was disturbed."""
    pairs = zip(subject, baseline, strict=True)
    return [a.bytes_per_s / b.bytes_per_s for a, b in pairs if not (a.disturbed or b.disturbed)]


def decided(target: float) -> Callable[[Sequence[Sequence[Run]]], bool]:
    """For `Bench.interleave`: whether the first two arms' pairs already decide ``target``."""
    return lambda runs: (
        judge_pairs(undisturbed_ratios(runs[0], runs[1]) or [0.0], target=target).verdict != ("undecided")
    )


def _cell(run: Run) -> str:
    """``1.234 GB/s [+0.5 GB, idle 12%, steal 3%]``: other device I/O in GB, CPU shares over the run."""
    extra = []
    if run.foreign_io_bytes is not None:
        extra.append(f"+{run.foreign_io_bytes / GB:.1f} GB")
    if run.cpu_idle is not None:
        extra.append(f"idle {run.cpu_idle:.0%}")
    if run.cpu_steal is not None and run.cpu_steal >= 0.01:
        extra.append(f"steal {run.cpu_steal:.0%}")
    return f"{run.bytes_per_s / GB:.3f} GB/s" + (f" [{', '.join(extra)}]" if extra else "")


@dataclass(frozen=True)
class Bench:
    """Where and how the benchmarks run: this machine, one scratch directory, the agent's python."""

    ex: LocalExecutor
    volume: Volume
    state_root: str  # agent state directories (events, result) — not under the measured directory
    device: Resolved | None = None  # whose counters show other I/O during a run
    python: str = sys.executable

    @property
    def directory(self) -> str:
        return self.volume.path

    def interleave(
        self,
        *arms: Callable[[], Run],
        pairs: int,
        rest_s: float,
        until: Callable[[Sequence[Sequence[Run]]], bool] | None = None,
    ) -> tuple[tuple[Run, ...], ...]:
        """Each arm ``pairs`` times, the order reversed every round (A B, B A, …), resting before each run;
        then, while ``until(runs)`` is false, two rounds more, for at most ``EXTRA_PAIRS_BUDGET_S``.

        With an even ``pairs`` every arm goes first equally often (ABBA counterbalancing):
        on this VM the arm that runs second in a round has been seen to gain.
        """
        got: list[list[Run]] = [[] for _ in arms]
        deadline = math.inf
        for i in itertools.count():
            if i == pairs:
                deadline = time.monotonic() + EXTRA_PAIRS_BUDGET_S
            at_round_end = i == pairs or (i > pairs and i % 2 == 0)
            if at_round_end and (until is None or until(got) or time.monotonic() > deadline):
                break
            order = list(range(len(arms))) if i % 2 == 0 else list(reversed(range(len(arms))))
            for position, k in enumerate(order):
                time.sleep(rest_s)
                got[k].append(dataclasses.replace(self.observed(arms[k]), position=position))
        return tuple(tuple(runs) for runs in got)

    def observed(self, arm: Callable[[], Run]) -> Run:
        """Run one arm with the device's byte counters, the CPU times and the load average around it."""
        load = float(Path("/proc/loadavg").read_text().split()[0])
        he = HostEvidence(self.ex)
        cpu0, before = cpu_times(), he.snapshot(self.device)
        run = arm()
        cpu1, counts = cpu_times(), Counts.between(before, he.snapshot(self.device))
        moved = None
        if counts.device_read_bytes is not None and counts.device_written_bytes is not None:
            moved = counts.device_read_bytes + counts.device_written_bytes
        idle, steal = ((b - a) / max(1, cpu1[2] - cpu0[2]) for a, b in zip(cpu0[:2], cpu1[:2], strict=True))
        return dataclasses.replace(run, device_io_bytes=moved, load_1min=load, cpu_idle=idle, cpu_steal=steal)

    def cold(self) -> None:
        """``sync; echo 3 > /proc/sys/vm/drop_caches``, then ``SETTLE_S``; raises where it cannot drop."""
        drop = HostEvidence(self.ex).drop()
        if not drop.dropped:
            raise LabError(f"cannot drop the page cache ({drop.how}): cold runs need root")
        time.sleep(SETTLE_S)

    def agent(self, workload: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Run one agent workload (cold start), wait for it, return its result; raises unless ok.

        The agent writes only below a checked scratch directory (kvgate.probes.scratch), strictly
        inside the volume, as G2 has it do.
        """
        target = checked(self.ex, self.volume, f"{self.directory}/agent")
        create(self.ex, target)
        self.cold()
        job = agentctl.start(
            self.ex,
            workload,
            {**spec, "target_dir": target.path},
            python=self.python,
            state_root=self.state_root,
            target=target,
        )
        res = agentctl.wait(self.ex, job, timeout_s=AGENT_TIMEOUT_S, interval_s=0.5)
        if res.get("status") != "ok":
            raise LabError(f"agent {workload} ended {res.get('status')}: {res.get('error')}")
        return res

    def fio_measured(self, job: FioJob) -> Run:
        """kvgate's cold fio run (lay out, drop caches, device counters); raises when INVALID."""
        measured = run_measured(self.ex, job, self.volume)
        if measured.invalid_reason:
            raise LabError(f"fio {job.name} INVALID: {measured.invalid_reason}")
        return fio_run(measured.run.summary().read, job)

    def fio_through_kvgate(self, job: FioJob) -> Run:
        """``run_fio`` over the LocalExecutor (watchdog wrapper, json+ parsed by kvgate); direct I/O."""
        run = run_fio(self.ex, job, self.volume)
        if run.invalid_reason:
            raise LabError(f"fio {job.name} through kvgate INVALID: {run.invalid_reason}")
        return fio_run(run.summary().read, job)

    def fio_by_hand(self, jobfile: str, *, cold: bool = True) -> dict[str, Any]:
        """``fio --output-format=json+ --output=out.json job.fio`` as a user types it; the parsed JSON."""
        if cold:
            self.cold()
        with tempfile.TemporaryDirectory(prefix="kvgate-bench-fio-") as tmp:
            (Path(tmp) / "job.fio").write_text(jobfile)
            argv = ["fio", "--output-format=json+", "--output=out.json", "job.fio"]
            proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600, check=False)
            out = (Path(tmp) / "out.json").read_text() if (Path(tmp) / "out.json").exists() else ""
        if proc.returncode != 0:
            raise LabError(f"fio by hand exited {proc.returncode}: {proc.stderr[-2000:]}")
        doc, _errors_before = locate_json(out)
        return doc


def cpu_times() -> tuple[int, int, int]:
    """(idle incl. iowait, steal, total) jiffies of all CPUs, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[3] + fields[4], fields[7], sum(fields[:8])  # user nice system idle iowait irq softirq steal


def fio_run(read: DirectionStats, job: FioJob) -> Run:
    """A fio read run: the bandwidth kvgate aggregates (sum over the job's clones)."""
    if read.bw_bytes_per_s <= 0:
        raise LabError(f"fio {job.name} reported no read bandwidth")
    return Run(float(read.bw_bytes_per_s), float(job.runtime_s), read.io_bytes)


def by_hand_read(doc: Mapping[str, Any]) -> Run:
    """Read bandwidth of a by-hand fio run, aggregated like kvgate does (sum over jobs)."""
    jobs = doc.get("jobs") or []
    bw = sum(float(j["read"]["bw_bytes"]) for j in jobs)
    if not jobs or bw <= 0:
        raise LabError("fio by hand reported no read bandwidth")
    own = sum(int(j["read"]["io_bytes"]) for j in jobs)
    return Run(bw, max(j["read"]["runtime"] for j in jobs) / 1000, own)


def by_hand_write(doc: Mapping[str, Any]) -> Run:
    """All bytes written over the longest job runtime (fio counts end_fsync inside a job's runtime)."""
    jobs = doc.get("jobs") or []
    total = sum(int(j["write"]["io_bytes"]) for j in jobs)
    window_s = max((int(j["write"]["runtime"]) for j in jobs), default=0) / 1000
    if not total or window_s <= 0:
        raise LabError("fio by hand wrote nothing")
    return Run(total / window_s, window_s, total)


def fsync_write_jobfile(directory: str, *, jobs: int, bytes_per_job: int, bs: int, direct: bool) -> str:
    """Sequential write of exactly ``jobs × bytes_per_job`` (no time_based loop), fsync at the end.

    ``fallocate=none`` so blocks are allocated while writing, as a checkpoint's fresh files are.
    """
    return "\n".join(
        [
            "; kvgate bench: sequential write with fsync, exact bytes",
            "[global]",
            "ioengine=psync",
            f"direct={int(direct)}",
            f"bs={bs}",
            "end_fsync=1",
            "fallocate=none",
            f"directory={directory}",
            "[ckpt-write]",
            "rw=write",
            f"size={bytes_per_job}",
            f"numjobs={jobs}",
            "",
        ]
    )


def agent_read_run(part: Mapping[str, Any], bw_key: str, *, other_io_bytes: int) -> Run:
    """A cold agent read (kv-restore restore, model-load load): proven cold, verified, direct.

    ``other_io_bytes``: what the agent run moved besides this read (writing its files,
    other loaders), for the device accounting.
    """
    why = cold_reason(part.get("cold"), dict(part), None)
    if why:
        raise LabError(f"agent read not usable: {why}")
    if not part.get("verify_ok"):
        raise LabError(f"agent read failed verification: {part.get('checksums_failed')} bad cells")
    own = other_io_bytes + int(part["cold"]["expected_read_bytes"])
    return Run(float(part[bw_key]), float(part["elapsed_s"]), own)


def checkpoint_write_run(res: Mapping[str, Any]) -> Run:
    """All bytes over the slowest rank's own write + fsync time; the read-back must verify.

    That is how ``by_hand_write`` reads fio (fio 3.33 reports each job's runtime but
    not when it started), so both arms use one window definition. The checkpoint's
    own figure (first rank start → last rank fsync) also counts the ranks' start
    stagger; it is kept (``own_figure_bytes_per_s``), not compared.
    """
    if not res["readback"].get("verify_ok"):
        raise LabError("checkpoint read-back failed verification")
    write, back = res["write"], res["readback"]
    slowest_s = max(float(r["end_s"]) - float(r["start_s"]) for r in write["ranks"])
    own = int(write["bytes"]) + int(back["bytes"])
    return Run(
        int(write["bytes"]) / slowest_s,
        slowest_s,
        own,
        own_figure_bytes_per_s=float(write["write_bytes_per_s"]),
    )


def machine(ex: LocalExecutor, directory: str) -> dict[str, str]:
    """The facts a reader needs to weigh the numbers: CPU, kernel, file system, device, tools."""
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = next(
        (ln.split(":", 1)[1].strip() for ln in cpuinfo.splitlines() if ln.startswith("model name")), "?"
    )
    fs = ex.run("findmnt -n -o FSTYPE,SOURCE,OPTIONS -T %s", directory, check=True).stdout.split()
    dev = HostEvidence(ex).resolve(directory)
    name = dev.head or "?"
    driver = os.path.basename(os.path.realpath(f"/sys/block/{name}/device/driver")) if dev.head else "?"
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    return {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": ex.run("git -C %s rev-parse --short HEAD", Path(__file__).parent).stdout.strip() or "?",
        "cpu": f"{model} × {os.cpu_count()}",
        "memory_gib": f"{mem_kib / (1 << 20):.1f}",
        "kernel": platform.release(),
        "fs": f"{fs[0]} on {fs[1]} ({fs[2]})" if len(fs) >= 3 else "?",
        "device": f"{name} ({driver})",
        "fio": ex.run("fio --version").stdout.strip(),
        "agent_python": platform.python_version(),
        "load_avg_at_start": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
    }
