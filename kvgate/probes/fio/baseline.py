"""Run a baseline matrix profile on one volume of one host: every cell, every repeat, cold.

Each run is handed to ``on_run`` as soon as it finishes, so the caller can store
its artifacts while the matrix goes on (DESIGN rule 4); the result holds the
runs, the measurements of every cell, the sweep's knee and the device's read
ceiling (the best sweep cell, run again: :mod:`kvgate.probes.fio.ceiling`).

Usage, on a real host::

    from pathlib import Path
    from kvgate.transport.local import LocalExecutor
    profile = load_profile(Path("workloads/fio/smoke.yaml"))
    result = run_matrix(LocalExecutor(), profile, volume, directory="/scratch/kvgate")
    [m.metric for m in result.measurements][:2]
    # → ['seqread-1m.read_bw_bytes_per_s', 'seqread-1m.read_iops']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.fio_matrix import (
    Knee,
    MatrixProfile,
    SweepPoint,
    load_profile,
    saturation_knee,
    sweep_cell,
)
from kvgate.configuration.inventory import Volume
from kvgate.probes.fio.ceiling import (
    CEILING_CELL,
    Reach,
    best_cell,
    ceiling_measurements,
    ceiling_spec,
    cell_point,
    next_level,
    sweep_points,
)
from kvgate.probes.fio.cold import MeasuredRun, run_measured
from kvgate.probes.fio.measure import knee_measurements, measurements
from kvgate.probes.fio.run import RunOptions
from kvgate.transport import Executor

OnRun = Callable[[str, int, MeasuredRun], None]  # (cell, repeat starting at 1, run)

__all__ = ["BaselineResult", "load_profile", "run_matrix"]


@dataclass(frozen=True)
class BaselineResult:
    """Every run of the matrix on one volume, its measurements, its sweep, knee and ceiling."""

    profile: str
    runs: Mapping[str, tuple[MeasuredRun, ...]]
    measurements: tuple[Measurement, ...]
    knee: Knee | None
    ceiling: SweepPoint | None = None  # the sweep's best cell, re-measured as the ``ceiling`` cell
    points: tuple[SweepPoint, ...] = ()  # mean bandwidth of every valid sweep cell


@dataclass(frozen=True)
class _Runner:
    ex: Executor
    volume: Volume
    opts: RunOptions | None
    on_run: OnRun | None

    def repeat(self, cell: str, job: FioJob, times: int) -> tuple[MeasuredRun, ...]:
        done = []
        for repeat in range(1, times + 1):
            measured = run_measured(self.ex, job, self.volume, self.opts)
            done.append(measured)
            if self.on_run:
                self.on_run(cell, repeat, measured)
        return tuple(done)


def run_matrix(
    ex: Executor,
    profile: MatrixProfile,
    volume: Volume,
    *,
    directory: str,
    opts: RunOptions | None = None,
    on_run: OnRun | None = None,
    reach: Reach | None = None,
) -> BaselineResult:
    """Every cell (``profile.repeats_of`` times) under ``directory`` (inside ``volume``), the sweep
    carried on to the readers' ``reach`` and a plateau (:func:`extend`), then the ceiling."""
    runner, tag = _Runner(ex, volume, opts, on_run), re.sub(r"[^A-Za-z0-9_.-]", "-", ex.host)
    jobs = profile.fio_jobs(directory, tag=tag)
    runs = {cell: runner.repeat(cell, job, profile.repeats_of(cell)) for cell, job in jobs.items()}
    points = sweep_points(profile, runs)
    if reach is not None and profile.sweep is not None:
        points += extend(runner, profile, points, reach, runs, directory=directory, tag=tag)
    best = best_cell(points) if points else None
    if best is not None:
        assert profile.sweep is not None  # a best cell comes from the sweep
        job = profile.job(
            profile.sweep.name, ceiling_spec(profile, best), directory, tag
        )  # the sweep's files
        runs[CEILING_CELL] = runner.repeat(CEILING_CELL, job, profile.repeats)
    found = [m for cell, rs in runs.items() for m in measurements(cell, rs)]
    knee = sweep_knee(profile, points, best)
    if knee and profile.sweep:
        found += knee_measurements(profile.sweep.name, knee)
    if best is not None:
        found += ceiling_measurements(best, runs[CEILING_CELL])
    if reach is not None and profile.sweep:
        found.append(
            Measurement(f"{profile.sweep.name}.reach_parallelism", reach.parallelism, "I/Os in flight")
        )
    return BaselineResult(profile.name, runs, tuple(found), knee, best, tuple(points))


def extend(
    runner: _Runner,
    profile: MatrixProfile,
    points: list[SweepPoint],
    reach: Reach,
    runs: dict[str, tuple[MeasuredRun, ...]],
    *,
    directory: str,
    tag: str,
) -> list[SweepPoint]:
    """Cells past the grid along ``reach.bs`` until :func:`next_level` is done (or a cell is invalid)."""
    sweep, added = profile.sweep, list[SweepPoint]()
    assert sweep is not None
    while (spec := next_level(sweep, [*points, *added], reach)) is not None:
        cell = sweep_cell(sweep.name, spec.bs, spec.numjobs, spec.iodepth)
        job = profile.job(sweep.name, spec, directory, tag)  # the sweep's files (more clones: more files)
        runs[cell] = runner.repeat(cell, job, profile.repeats_of(cell))
        point = cell_point(spec, runs[cell])
        if point is None:
            break  # no valid run: its reason is in the cell's measurements
        added.append(point)
    return added


def sweep_knee(profile: MatrixProfile, points: list[SweepPoint], best: SweepPoint | None) -> Knee | None:
    """The knee of the sweep along the ceiling's block size (the curve that reached the device's best)."""
    if profile.sweep is None or best is None:
        return None
    along = [p for p in points if p.bs == best.bs]
    return saturation_knee(along, profile.sweep.knee_gain)
