"""The device's read ceiling: the sweep's best cell (block size × numjobs × iodepth), re-measured.

One fixed job (1 MiB, QD 32) is not a device's limit: on the development VM the
agent's parallel reader (8 MiB reads) moved 2.8 × what G2's ``seqread-1m`` did. The
sweep therefore covers block sizes as well as jobs × depth, and its best cell is
the candidate ceiling. The best of many noisy runs is biased upward (the winner of
the draws), so that configuration runs again as the ``ceiling`` cell, with the
profile's repeats and runtime: their mean is the ceiling, their spread its CV, and
its cold proof is checked like every fio read.

>>> pts = [SweepPoint(1, 8, 1.0e9, "1m"), SweepPoint(4, 8, 2.2e9, "4m"), SweepPoint(8, 8, 2.1e9, "8m")]
>>> best = best_cell(pts); (best.bs, best.numjobs, best.iodepth), configuration(best)
(('4m', 4, 8), 'bs 4m, 4 jobs × QD 8')
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_job import parse_size
from kvgate.configuration.fio_matrix import JobSpec, MatrixProfile, SweepPoint, sweep_cell
from kvgate.probes.fio.cold import MeasuredRun

CEILING_CELL = "ceiling"


def sweep_points(profile: MatrixProfile, runs: Mapping[str, Sequence[MeasuredRun]]) -> list[SweepPoint]:
    """Mean bandwidth (read + write) of each sweep cell over its valid runs; no valid run, no point."""
    sweep, points = profile.sweep, list[SweepPoint]()
    if sweep is None:
        return points
    for bs, nj, qd in itertools.product(sweep.sizes, sweep.numjobs, sweep.iodepth):
        cell = runs.get(sweep_cell(sweep.name, bs, nj, qd), ())
        valid = [r.run.summary() for r in cell if not r.invalid_reason]
        if valid:
            bw = sum(s.read.bw_bytes_per_s + s.write.bw_bytes_per_s for s in valid) / len(valid)
            points.append(SweepPoint(nj, qd, bw, bs))
    return points


def best_cell(points: Sequence[SweepPoint]) -> SweepPoint:
    """The sweep cell with the highest bandwidth (the fewest I/Os in flight among equals)."""
    if not points:
        raise ValueError("a sweep without points has no ceiling")
    return max(points, key=lambda p: (p.bw_bytes_per_s, -p.parallelism, -parse_size(p.bs)))


def ceiling_spec(profile: MatrixProfile, best: SweepPoint) -> JobSpec:
    """The best cell's configuration with the profile's own runtime (not the sweep's shorter one)."""
    assert profile.sweep is not None
    return JobSpec(rw=profile.sweep.rw, bs=best.bs, numjobs=best.numjobs, iodepth=best.iodepth)


def configuration(best: SweepPoint) -> str:
    """How the ceiling was reached, for a report line: ``bs 4m, 4 jobs × QD 8``."""
    return f"bs {best.bs}, {best.numjobs} jobs × QD {best.iodepth}"


def ceiling_measurements(best: SweepPoint, confirmed: Sequence[MeasuredRun]) -> list[Measurement]:
    """The ceiling's configuration and the most the device was seen to deliver.

    Its bandwidth is the ``ceiling`` cell's own measurements (the mean of ``confirmed``).
    ``best_read_bw_bytes_per_s``, the highest of the sweep cell and every valid repeat,
    bounds what G3 may believe a restore read from this device.
    """
    repeats = [r.run.summary().read.bw_bytes_per_s for r in confirmed if not r.invalid_reason]
    return [
        Measurement(f"{CEILING_CELL}.bs_bytes", parse_size(best.bs), "bytes"),
        Measurement(f"{CEILING_CELL}.numjobs", best.numjobs, "jobs"),
        Measurement(f"{CEILING_CELL}.iodepth", best.iodepth, "I/Os per job"),
        Measurement(f"{CEILING_CELL}.sweep_bw_bytes_per_s", best.bw_bytes_per_s, "bytes/s"),
        Measurement(
            f"{CEILING_CELL}.best_read_bw_bytes_per_s", max([best.bw_bytes_per_s, *repeats]), "bytes/s"
        ),
    ]
