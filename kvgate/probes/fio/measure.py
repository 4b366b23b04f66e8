"""fio results → kvgate.base.criteria Measurements, so the G2 gate judges them like any other number.

One cell (a job of the matrix) is run ``repeats`` times. Its bandwidth and IOPS
are the mean over repeats, its latency percentiles come from the histogram of
all repeats merged, and ``…_cv`` is the coefficient of variation of bandwidth.
If any repeat is INVALID, every measurement of the cell carries the reason; a
percentile that falls in fio's open-ended last bucket is INVALID on its own
(its true value is only known to be ≥ ~17.05 s).

>>> [m.metric for m in knee_measurements("sweep", Knee(16, 4, 4, 2.0e9, True, 0.05))]
['sweep.knee_parallelism', 'sweep.knee_bw_bytes_per_s', 'sweep.saturated']
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_matrix import Knee, cv
from kvgate.probes.fio.cold import MeasuredRun
from kvgate.probes.fio.hist import CEILING_FLOOR_NS, CEILING_NS, Histogram
from kvgate.probes.fio.parse import DirectionStats
from kvgate.probes.fio.run import FioRun

PERCENTILES = (("p50", 50.0), ("p99", 99.0), ("p99_9", 99.9))


def _reason(runs: Sequence[FioRun | MeasuredRun]) -> str | None:
    """The first repeat's INVALID reason, naming the repeat."""
    for i, r in enumerate(runs, 1):
        if r.invalid_reason:
            return f"repeat {i} of {len(runs)}: {r.invalid_reason}"
    return None


def _directions(runs: Sequence[FioRun], name: str) -> list[DirectionStats]:
    out = []
    for r in runs:
        if r.result is not None:
            summary = r.result.summary()
            out.append(summary.read if name == "read" else summary.write)
    return out


def measurements(
    cell: str, runs: Sequence[FioRun | MeasuredRun], *, evidence: tuple[str, ...] = ()
) -> list[Measurement]:
    """Measurements ``<cell>.read_bw_bytes_per_s``, ``….read_clat_p99_ns``, ``….read_bw_bytes_per_s_cv``, …"""
    if not runs:
        raise ValueError(f"{cell}: no runs to measure")
    reason = _reason(runs)
    plain = [r.run if isinstance(r, MeasuredRun) else r for r in runs]
    out: list[Measurement] = []
    for name in ("read", "write"):
        stats = _directions(plain, name)
        if any(d.io_bytes for d in stats):
            out += _direction(f"{cell}.{name}", stats, reason, evidence, repeats=len(runs))
    if not out:
        why = reason or "no I/O measured"
        out.append(Measurement(f"{cell}.read_bw_bytes_per_s", None, "bytes/s", evidence, why))
    return out


def _direction(
    prefix: str, stats: list[DirectionStats], reason: str | None, evidence: tuple[str, ...], *, repeats: int
) -> list[Measurement]:
    bws = [float(d.bw_bytes_per_s) for d in stats]
    out = [
        Measurement(f"{prefix}_bw_bytes_per_s", statistics.fmean(bws), "bytes/s", evidence, reason),
        Measurement(f"{prefix}_iops", statistics.fmean(d.iops for d in stats), "IOPS", evidence, reason),
        _cv(f"{prefix}_bw_bytes_per_s_cv", bws, reason, evidence, repeats),
    ]
    merged = Histogram.merge(d.clat for d in stats)
    out += [
        percentile_measurement(f"{prefix}_clat_{label}_ns", merged, p, reason, evidence)
        for label, p in PERCENTILES
    ]
    return out


def _cv(
    metric: str, values: list[float], reason: str | None, evidence: tuple[str, ...], repeats: int
) -> Measurement:
    value = cv(values)
    why = reason or (
        None if value is not None else f"needs ≥ 2 valid repeats, got {len(values)} of {repeats}"
    )
    return Measurement(metric, value, "", evidence, why)


def percentile_measurement(
    metric: str, hist: Histogram, p: float, reason: str | None = None, evidence: tuple[str, ...] = ()
) -> Measurement:
    """The p-th percentile of ``hist``; INVALID when it lands in fio's open-ended last bucket."""
    if not hist.samples:
        return Measurement(metric, None, "ns", evidence, reason or "no latency samples (json+ bins missing)")
    value = hist.percentile_ns(p)
    if value == CEILING_NS and not reason:
        reason = f"p{p:g} is in fio's open-ended last bucket: the true latency is ≥ {CEILING_FLOOR_NS} ns"
    return Measurement(metric, value, "ns", evidence, reason)


def knee_measurements(sweep: str, knee: Knee, *, evidence: tuple[str, ...] = ()) -> list[Measurement]:
    """The sweep's knee: parallelism (I/Os in flight), its bandwidth, and whether it saturated."""
    return [
        Measurement(f"{sweep}.knee_parallelism", knee.parallelism, "I/Os in flight", evidence),
        Measurement(f"{sweep}.knee_bw_bytes_per_s", knee.bw_bytes_per_s, "bytes/s", evidence),
        Measurement(f"{sweep}.saturated", knee.saturated, "", evidence),
    ]
