"""The device's read ceiling: the sweep's best cell (block size × numjobs × iodepth), re-measured.

One fixed job (1 MiB, QD 32) is not a device's limit: on the development VM the
agent's parallel reader (8 MiB reads) moved 2.8 × what G2's ``seqread-1m`` did. The
sweep therefore covers block sizes as well as jobs × depth, and its best cell is
the candidate ceiling. The best of many noisy runs is biased upward (the winner of
the draws), so that configuration runs again as the ``ceiling`` cell, with the
profile's repeats and runtime: their mean is the ceiling, their spread its CV, and
its cold proof is checked like every fio read.

The grid alone may stop short of the readers: G2's KV restore keeps requests × readers
per request reads of 8 MiB in flight, more than a small grid's numjobs × iodepth. The
sweep therefore goes on along the readers' block size (:class:`Reach`), doubling the I/Os
in flight, until it covers the readers and its bandwidth has stopped growing (a plateau:
the knee is not its last point), or it reaches the profile's ``max_parallelism``.

>>> pts = [SweepPoint(1, 8, 1.0e9, "1m"), SweepPoint(4, 8, 2.2e9, "4m"), SweepPoint(8, 8, 2.1e9, "8m")]
>>> best = best_cell(pts); (best.bs, best.numjobs, best.iodepth), configuration(best)
(('4m', 4, 8), 'bs 4m, 4 jobs × QD 8')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_job import parse_size
from kvgate.configuration.fio_matrix import (
    JobSpec,
    MatrixProfile,
    SweepPoint,
    SweepSpec,
    saturation_knee,
)
from kvgate.probes.fio.cold import MeasuredRun

CEILING_CELL = "ceiling"
CEILING_MARGIN = 0.25  # a read may beat the ceiling (one cell's mean, or one repeat) by this, not more


@dataclass(frozen=True)
class Reach:
    """The I/Os in flight and block size of the busiest reader the gates run: the sweep must cover it.

    >>> Reach(32, "4m", "KV restore: 8 requests × 4 readers").parallelism
    32
    """

    parallelism: int
    bs: str
    why: str


def next_level(sweep: SweepSpec, points: Sequence[SweepPoint], reach: Reach) -> JobSpec | None:
    """The next cell along ``reach.bs`` (twice the I/Os in flight), or None once the sweep is done.

    Done: it covers ``reach`` and plateaued there (the knee is not its last point), or it
    reached ``max_parallelism``.

    >>> sweep = SweepSpec(numjobs=(1, 2), iodepth=(1, 8), bs="4m", max_parallelism=64)
    >>> grid = [SweepPoint(2, 8, 2.0e9, "4m")]
    >>> next_level(sweep, grid, Reach(32, "4m", "")).numjobs
    4
    >>> flat = [*grid, SweepPoint(4, 8, 2.01e9, "4m")]
    >>> next_level(sweep, flat, Reach(32, "4m", "")) is None
    True
    """
    along = [p for p in points if p.bs == reach.bs]
    top = max((p.parallelism for p in along), default=0)
    covered = bool(along) and top >= reach.parallelism and saturation_knee(along, sweep.knee_gain).saturated
    if covered or top >= sweep.max_parallelism:
        return None
    want = min(2 * top if top else max(sweep.numjobs) * max(sweep.iodepth), sweep.max_parallelism)
    depth = min(max(sweep.iodepth), want)
    return sweep.spec(reach.bs, -(-want // depth), depth)


def cell_point(spec: JobSpec, runs: Sequence[MeasuredRun]) -> SweepPoint | None:
    """Mean bandwidth (read + write) of one sweep cell over its valid runs; no valid run, no point."""
    valid = [r.run.summary() for r in runs if not r.invalid_reason]
    if not valid:
        return None
    bw = sum(s.read.bw_bytes_per_s + s.write.bw_bytes_per_s for s in valid) / len(valid)
    return SweepPoint(spec.numjobs, spec.iodepth, bw, spec.bs)


def sweep_points(profile: MatrixProfile, runs: Mapping[str, Sequence[MeasuredRun]]) -> list[SweepPoint]:
    """The grid's points (:func:`cell_point` of each cell), in the grid's order."""
    if profile.sweep is None:
        return []
    found = (cell_point(spec, runs.get(cell, ())) for cell, spec in profile.sweep.cells())
    return [p for p in found if p is not None]


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
    jobs = f"{best.numjobs} job" + ("" if best.numjobs == 1 else "s")
    return f"bs {best.bs}, {jobs} × QD {best.iodepth}"


def ceiling_measurements(best: SweepPoint, confirmed: Sequence[MeasuredRun]) -> list[Measurement]:
    """The ceiling's configuration and the most the device was seen to deliver.

    Its bandwidth is the ``ceiling`` cell's own measurements (the mean of ``confirmed``).
    ``best_read_bw_bytes_per_s``, the highest of the sweep cell and every valid repeat,
    bounds what G3 may believe a restore read from this device; with no repeat proven cold,
    it is not trusted either (the reason is the first repeat's).
    """
    repeats = [r.run.summary().read.bw_bytes_per_s for r in confirmed if not r.invalid_reason]
    untrusted = None if repeats or not confirmed else confirmed[0].invalid_reason
    return [
        Measurement(f"{CEILING_CELL}.bs_bytes", parse_size(best.bs), "bytes"),
        Measurement(f"{CEILING_CELL}.numjobs", best.numjobs, "jobs"),
        Measurement(f"{CEILING_CELL}.iodepth", best.iodepth, "I/Os per job"),
        Measurement(f"{CEILING_CELL}.sweep_bw_bytes_per_s", best.bw_bytes_per_s, "bytes/s"),
        Measurement(
            f"{CEILING_CELL}.best_read_bw_bytes_per_s",
            max([best.bw_bytes_per_s, *repeats]),
            "bytes/s",
            invalid_reason=untrusted,
        ),
    ]
