"""Measure one volume of one host for G2: the fio matrix, then the agent workloads.

Every raw output is stored as it arrives (a crash keeps what ran); the result is a
map metric → Measurement that the G2 checks judge, plus the sweep for the chart.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_job import parse_size
from kvgate.configuration.fio_matrix import Knee, MatrixProfile, SweepPoint
from kvgate.configuration.model_profiles import ModelProfile
from kvgate.orchestration.g2.ceiling import contradictions, raise_ceiling, readers_reach
from kvgate.orchestration.g2.workloads import VolumeUnderTest, run_workloads
from kvgate.probes.fio import MeasuredRun, Reach, RunOptions, configuration, run_matrix
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.scratch import ScratchDir, checked, create, remove, run_directory
from kvgate.record import Contradiction
from kvgate.transport import Executor


@dataclass
class VolumeResult:
    """What G2 measured on one volume of one host."""

    host: str
    volume: str
    measurements: dict[str, Measurement] = field(default_factory=dict)
    knee: Knee | None = None
    ceiling: SweepPoint | None = None  # the sweep's best cell (its re-measured bandwidth: "ceiling.*")
    sweep: list[tuple[str, int, float]] = field(default_factory=list)  # (bs, parallelism, bytes/s)
    points: tuple[SweepPoint, ...] = ()  # every valid sweep cell, the grid's and past it
    contradictions: list[Contradiction] = field(default_factory=list)  # its figures against each other
    virtual: str = ""  # a virtual machine's disk: what its counters cannot see (blockdev.guest_disks)

    def add(self, found: list[Measurement]) -> None:
        self.measurements |= {m.metric: m for m in found}


def remove_work_dir(ex: Executor, directory: ScratchDir) -> None:
    """Our own directory only (also after Ctrl-C); the shared parent goes when no run still uses it."""
    remove(ex, directory, parents=1)


def proof_json(mr: MeasuredRun) -> str:
    """The cold proof of one fio run, and the kernel's storage lines of its window, as stored evidence."""
    said = {**mr.proof.to_json(), "invalid_reason": mr.invalid_reason, "kernel_log": mr.kernel}
    return json.dumps(said, indent=2, default=str)


def measure_volume(
    vut: VolumeUnderTest, *, profile: MatrixProfile, models: Mapping[str, ModelProfile]
) -> VolumeResult:
    """Run the fio matrix (its sweep out to the workloads' readers) and the workloads on one scratch
    volume; the ceiling raised by a faster read; clean up our files after.

    The work directory passes the scratch check (kvgate.probes.scratch) before anything is created.
    """
    ex, vol = vut.ex, vut.volume
    result = VolumeResult(ex.host, vut.name)
    directory = checked(ex, vol, run_directory(vol, gate="g2", host=ex.host, run=vut.store.path.name))
    try:
        create(ex, directory)
        result.virtual = HostEvidence(ex, sudo=vut.host.sudo).resolve(directory.path).virtual
        _fio(vut, result, profile=profile, directory=directory.path, reach=readers_reach(models))
        result.add(run_workloads(vut, directory, models=models))
    finally:
        remove_work_dir(ex, directory)
    judge_ceiling(result)
    return result


def judge_ceiling(result: VolumeResult) -> None:
    """A faster trusted read raises the ceiling (kvgate.orchestration.g2.ceiling); what still contradicts."""
    how = configuration(result.ceiling) if result.ceiling else "no sweep"
    result.add(raise_ceiling(result.measurements, how=how))
    where = f"{result.host}/{result.volume}"
    result.contradictions = contradictions(
        where, result.measurements, knee=result.knee, points=list(result.points)
    )


def _fio(
    vut: VolumeUnderTest, result: VolumeResult, *, profile: MatrixProfile, directory: str, reach: Reach | None
) -> None:
    ex, store = vut.ex, vut.store
    evidence: dict[str, list[str]] = {}

    def on_run(cell: str, repeat: int, mr: MeasuredRun) -> None:
        vut.notify(f"fio {cell} #{repeat}")
        base = f"g2/{result.volume}/fio/{cell}/{repeat}"
        paths = [store.artifact(ex.host, f"{base}/{n}", t) for n, t in mr.run.artifacts().items()]
        paths.append(store.artifact(ex.host, f"{base}/cold-proof.json", proof_json(mr)))
        evidence.setdefault(cell, []).extend(paths)

    opts = RunOptions(sudo=vut.host.sudo, server_cache=vut.server_cache)
    base = run_matrix(ex, profile, vut.volume, directory=directory, opts=opts, on_run=on_run, reach=reach)
    for m in base.measurements:
        cell = m.metric.split(".")[0]
        result.add([dataclasses.replace(m, evidence=tuple(evidence.get(cell, ())))])
    result.knee, result.ceiling, result.points = base.knee, base.ceiling, base.points
    result.sweep = sweep_series(base.points)


def sweep_series(points: tuple[SweepPoint, ...]) -> list[tuple[str, int, float]]:
    """Per block size, the best bandwidth at each parallelism (numjobs × iodepth), for the chart."""
    best: dict[tuple[str, int], float] = {}
    for p in points:
        key = (p.bs, p.parallelism)
        best[key] = max(best.get(key, 0.0), p.bw_bytes_per_s)
    return [
        (bs, par, bw)
        for (bs, par), bw in sorted(best.items(), key=lambda kv: (parse_size(kv[0][0]), kv[0][1]))
    ]
