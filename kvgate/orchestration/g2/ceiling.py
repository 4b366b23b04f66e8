"""G2's read ceiling is the device's: the readers it must cover, the reads that raise it, what contradicts.

G3 calls a restore faster than G2's best read (+ ``CEILING_MARGIN``) impossible, so the ceiling
must be the most this device was seen to deliver, not the best cell of a grid that stopped short
of the readers:

- :func:`readers_reach`: the I/Os in flight of the busiest reader G2 runs (the KV restore's
  requests × readers per request, the model loader's and checkpoint read-back's threads) and
  its block size; the fio sweep goes on to cover it and a plateau (kvgate.probes.fio.ceiling);
- :func:`raise_ceiling`: a trusted G2 read faster than the fio ceiling raises it, and
  ``ceiling.raised_by`` says which read and why (fio's own figure stays, ``ceiling.fio_*``);
- :func:`contradictions`: what still contradicts once the ceiling is the device's: a read
  above the ceiling G3 would call impossible, a knee on the sweep's last point.

>>> from kvgate.base.criteria import Measurement
>>> ms = {k: Measurement(k, v, "B/s") for k, v in [(CEILING, 2.26e9), (BEST, 2.4e9),
...       ("kv_restore.parallel.read_bw_bytes_per_s", 3.87e9)]}
>>> [m.value for m in raise_ceiling(ms, how="bs 4m, 2 jobs × QD 8")][:2]
[3870000000.0, 3870000000.0]
"""

from __future__ import annotations

from collections.abc import Mapping

from kvgate.base.criteria import Measurement
from kvgate.configuration.fio_job import fio_size
from kvgate.configuration.fio_matrix import Knee, SweepPoint
from kvgate.configuration.model_profiles import ModelProfile
from kvgate.probes.fio import CEILING_CELL, CEILING_MARGIN, Reach
from kvgate.record import Contradiction, Figure

CEILING = f"{CEILING_CELL}.read_bw_bytes_per_s"
BEST = f"{CEILING_CELL}.best_read_bw_bytes_per_s"
RAISED_BY = f"{CEILING_CELL}.raised_by"
# every read G2 measures besides the sweep, by what produced it
READS = {
    "seqread-1m.read_bw_bytes_per_s": "fio sequential read (1 MiB)",
    "kv_restore.serial.read_bw_bytes_per_s": "KV restore, 1 reader per request",
    "kv_restore.parallel.read_bw_bytes_per_s": "KV restore, parallel readers",
    "model_load.sequential.read_bw_bytes_per_s": "model load, sequential",
    "model_load.parallel.read_bw_bytes_per_s": "model load, parallel",
    "checkpoint.readback_bw_bytes_per_s": "checkpoint read-back",
}


def readers_reach(models: Mapping[str, ModelProfile]) -> Reach | None:
    """The I/Os in flight (and block size) of the busiest reader G2 runs; None: no reader.

    ``models``: each workload with its model profile (GateConfig.workload_models).
    """
    found = [r for workload, profile in models.items() if (r := _reader(workload, profile)) is not None]
    if not found:
        return None
    parallelism, io_bytes, why = max(found)
    return Reach(parallelism, fio_size(io_bytes), f"{why}, {fio_size(io_bytes)} reads")


def _reader(workload: str, profile: ModelProfile) -> tuple[int, int, str] | None:
    """(I/Os in flight, read size, what) of one workload's reader."""
    kv, ml, ck = profile.kv_restore, profile.model_load, profile.checkpoint
    if workload == "kv-restore" and kv is not None:
        readers = max(kv.readers_per_request)
        return kv.requests * readers, kv.io_bytes, f"KV restore: {kv.requests} requests × {readers} readers"
    if workload == "model-load" and ml is not None:
        return ml.threads, ml.io_bytes, f"model load: {ml.threads} threads"
    if workload == "checkpoint" and ck is not None:
        return ck.readback_threads, ck.io_bytes, f"checkpoint read-back: {ck.readback_threads} threads"
    return None


def _trusted(m: Measurement | None) -> float | None:
    """A measurement's number when it can be trusted (proven cold, a number); else None."""
    if m is None or m.invalid_reason or isinstance(m.value, bool) or not isinstance(m.value, int | float):
        return None
    return float(m.value)


def fastest_read(ms: Mapping[str, Measurement]) -> tuple[str, float] | None:
    """The trusted G2 read with the highest bandwidth: (metric, bytes/s)."""
    reads = [(metric, v) for metric in READS if (v := _trusted(ms.get(metric))) is not None]
    return max(reads, key=lambda r: r[1]) if reads else None


def raise_ceiling(ms: Mapping[str, Measurement], *, how: str) -> list[Measurement]:
    """The ceiling raised to a faster trusted G2 read, with the reason; [] when none beat it.

    ``how``: how fio reached its ceiling (``bs 4m, 2 jobs × QD 8``), for the reason.
    """
    fio, fastest = _trusted(ms.get(CEILING)), fastest_read(ms)
    if fio is None or fastest is None or fastest[1] <= fio:
        return []
    metric, value = fastest
    raiser = ms[metric]
    why = (
        f"{READS[metric]} read {value / 1e9:.3g} GB/s, above the fio sweep's ceiling of {fio / 1e9:.3g} GB/s "
        f"({how}): the sweep did not reach what this reader does, so the ceiling is this read"
    )
    best = max(value, _trusted(ms.get(BEST)) or 0.0)
    return [
        Measurement(CEILING, value, raiser.unit, raiser.evidence),
        Measurement(BEST, best, "bytes/s", raiser.evidence),
        Measurement(RAISED_BY, why, ""),
        Measurement(f"{CEILING_CELL}.fio_read_bw_bytes_per_s", fio, "bytes/s", ms[CEILING].evidence),
    ]


def contradictions(
    where: str, ms: Mapping[str, Measurement], *, knee: Knee | None, points: list[SweepPoint]
) -> list[Contradiction]:
    """What G2's own figures say against each other: a read G3 would call impossible, an edge knee."""
    found = [c for metric in READS if (c := _above(where, ms, metric)) is not None]
    found += [c for pair in PARALLEL_PAIRS if (c := _parallel_slower(where, ms, *pair)) is not None]
    edge = _edge_knee(where, knee, points)
    return found + ([edge] if edge else [])


# (one reader, parallel readers) of one workload: the parallel path exists to read faster (the seed's R1)
PARALLEL_PAIRS = (
    ("kv_restore.serial.read_bw_bytes_per_s", "kv_restore.parallel.read_bw_bytes_per_s"),
    ("model_load.sequential.read_bw_bytes_per_s", "model_load.parallel.read_bw_bytes_per_s"),
)
SLOWER = 0.9  # parallel readers below this share of one reader's bandwidth: more than run-to-run noise


def _parallel_slower(where: str, ms: Mapping[str, Measurement], one: str, many: str) -> Contradiction | None:
    """Parallel readers slower than one reader of the same workload (a reader found the demo's KV restore
    at 0.84× its serial pass called only "no faster")."""
    single, parallel = _trusted(ms.get(one)), _trusted(ms.get(many))
    if single is None or parallel is None or parallel >= SLOWER * single:
        return None
    return Contradiction(
        where=where,
        first=Figure(name=READS[many], value=parallel, unit="B/s", source=many),
        second=Figure(name=READS[one], value=single, unit="B/s", source=one),
        meaning=(
            f"The parallel readers read at {parallel / single:.2f}× one reader's bandwidth: on this volume "
            "more readers did not read faster (one reader already reached what the volume serves, or the "
            "readers contended), so a parallel reader's gain (the seed's R1) is not to be expected here"
        ),
    )


def _above(where: str, ms: Mapping[str, Measurement], metric: str) -> Contradiction | None:
    value, best = _trusted(ms.get(metric)), _trusted(ms.get(BEST)) or _trusted(ms.get(CEILING))
    if value is None or best is None or value <= best * (1 + CEILING_MARGIN):
        return None
    return Contradiction(
        where=where,
        first=Figure(name=READS[metric], value=value, unit="B/s", source=metric),
        second=Figure(name="read ceiling (best read)", value=best, unit="B/s", source=BEST),
        meaning=(
            f"A read {value / best:.2f}× the ceiling G3 holds restores to (+{CEILING_MARGIN:.0%}): either "
            "the ceiling is not the device's, or this read was not served by the device alone"
        ),
    )


def _edge_knee(where: str, knee: Knee | None, points: list[SweepPoint]) -> Contradiction | None:
    if knee is None or knee.saturated:
        return None
    top = max(p.parallelism for p in points if p.bs == knee.bs)
    return Contradiction(
        where=where,
        first=Figure(
            name=f"knee (bs {knee.bs})", value=knee.parallelism, unit="I/Os in flight", source="knee"
        ),
        second=Figure(
            name="the sweep's largest parallelism", value=top, unit="I/Os in flight", source="sweep"
        ),
        meaning=(
            "The knee sits on the sweep's last point: the sweep did not find the knee (bandwidth still grew "
            f"by ≥ {knee.gain:.0%} there), so the ceiling may lie beyond it"
        ),
    )
