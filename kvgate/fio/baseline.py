"""Run a baseline matrix profile on one volume of one host: every cell, every repeat, cold.

Each run is handed to ``on_run`` as soon as it finishes, so the caller can store
its artifacts while the matrix goes on (DESIGN rule 4); the result holds the
runs, the measurements of every cell and the sweep's knee.

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

from kvgate.fio.cold import MeasuredRun, run_measured
from kvgate.fio.matrix import Knee, MatrixProfile, SweepPoint, load_profile, saturation_knee, sweep_cell
from kvgate.fio.measure import knee_measurements, measurements
from kvgate.fio.run import RunOptions
from kvgate.inventory.schema import Volume
from kvgate.judge import Measurement
from kvgate.transport.base import Executor

OnRun = Callable[[str, int, MeasuredRun], None]  # (cell, repeat starting at 1, run)

__all__ = ["BaselineResult", "load_profile", "run_matrix", "sweep_knee"]


@dataclass(frozen=True)
class BaselineResult:
    """Every run of the matrix on one volume, its measurements and its knee."""

    profile: str
    runs: Mapping[str, tuple[MeasuredRun, ...]]
    measurements: tuple[Measurement, ...]
    knee: Knee | None


def run_matrix(
    ex: Executor,
    profile: MatrixProfile,
    volume: Volume,
    *,
    directory: str,
    opts: RunOptions | None = None,
    on_run: OnRun | None = None,
) -> BaselineResult:
    """Run every cell ``profile.repeats`` times under ``directory`` (inside ``volume``)."""
    runs: dict[str, tuple[MeasuredRun, ...]] = {}
    for cell, job in profile.fio_jobs(directory, tag=re.sub(r"[^A-Za-z0-9_.-]", "-", ex.host)).items():
        done = []
        for repeat in range(1, profile.repeats + 1):
            measured = run_measured(ex, job, volume, opts)
            done.append(measured)
            if on_run:
                on_run(cell, repeat, measured)
        runs[cell] = tuple(done)
    found = [m for cell, rs in runs.items() for m in measurements(cell, rs)]
    knee = sweep_knee(profile, runs)
    if knee and profile.sweep:
        found += knee_measurements(profile.sweep.name, knee)
    return BaselineResult(profile.name, runs, tuple(found), knee)


def sweep_knee(profile: MatrixProfile, runs: Mapping[str, tuple[MeasuredRun, ...]]) -> Knee | None:
    """The knee of the profile's sweep from valid runs (mean bandwidth per cell); None without one."""
    sweep = profile.sweep
    if sweep is None:
        return None
    points = []
    for nj in sweep.numjobs:
        for qd in sweep.iodepth:
            valid = [
                r.run.summary() for r in runs.get(sweep_cell(sweep.name, nj, qd), ()) if not r.invalid_reason
            ]
            if valid:
                bw = sum(s.read.bw_bytes_per_s + s.write.bw_bytes_per_s for s in valid) / len(valid)
                points.append(SweepPoint(nj, qd, bw))
    return saturation_knee(points, sweep.knee_gain) if points else None
