"""G2's report tables, laid out at render time from the numbers G2 recorded (``g2_rows``).

Each host/volume's row holds its measurements (value, unit, invalid reason), its knee and
its ceiling cell (kvgate.orchestration.g2.report_rows.row).

Rates are in MB/s to three significant figures, so a 20 MB/s volume reads 23.4, not 0.02:

>>> shown(2.3149e9, scale=MB), shown(23.4e6, scale=MB), shown(83012.0, scale=1000), shown(None)
('2,315', '23.4', '83', '—')
"""

from __future__ import annotations

from collections.abc import Mapping

from kvgate.base.criteria import Measurement
from kvgate.base.units import MB
from kvgate.configuration.fio_job import parse_size
from kvgate.configuration.fio_matrix import SweepPoint
from kvgate.probes.fio import CEILING_CELL, configuration
from kvgate.record import G2Row, Section, SweepCell
from kvgate.report.numbers import human, significant
from kvgate.report.tables import Cells, in_order, table

FIO_COLUMNS = [
    "host",
    "volume",
    "seq read MB/s",
    "seq write MB/s",
    "rand read kIOPS",
    "rand read p99 ms",
    "knee (I/Os in flight @ MB/s)",
    "read ceiling MB/s (where)",
]
WORK_COLUMNS = [
    "host",
    "volume",
    "KV restore serial MB/s",
    "KV restore parallel MB/s",
    "parallel/serial",
    "KV restore p50 s (parallel)",
    "model load sequential MB/s",
    "model load parallel MB/s",
    "checkpoint write MB/s",
    "checkpoint read-back MB/s",
]
FIO_NOTE = (
    "Latency percentiles are merged from fio's json+ histograms across jobs and repeats. "
    "Read ceiling: the sweep's best cell (block size × jobs × depth, carried on along the readers' block "
    "size until it covers their I/Os in flight and stops growing) run again with the profile's repeats, "
    "their mean — or a faster G2 read, named — which the planner sizes restores by. Best single read: the "
    "fastest single run seen; G3 calls a restore more than 25 % faster than it impossible."
)
WORK_NOTE = (
    "KV restore: all requests concurrently; serial = 1 reader per request, "
    "parallel = several (the R1 serial vs parallel read path)."
)
Measured = Mapping[str, Measurement]


def shown(m: Measurement | float | None, *, scale: float = 1.0) -> str:
    """A value over ``scale`` to three significant figures, ``(INVALID)`` when it cannot be trusted."""
    value = m.value if isinstance(m, Measurement) else m
    if value is None or not isinstance(value, int | float):
        return "—"
    text = significant(value / scale)
    return f"{text} (INVALID)" if isinstance(m, Measurement) and m.invalid_reason else text


def measured(row: G2Row) -> dict[str, Measurement]:
    return {key: m.measurement() for key, m in row.measurements.items()}


def fio_cells(host: str, volume: str, row: G2Row) -> list[str]:
    ms, knee = measured(row), row.knee
    at = "—" if not knee else f"{knee.parallelism} @ {shown(knee.bw_bytes_per_s, scale=MB)} (bs {knee.bs})"
    if knee and not knee.saturated:
        at += ": not found, the sweep's last point"
    return [
        host,
        volume,
        shown(ms.get("seqread-1m.read_bw_bytes_per_s"), scale=MB),
        shown(ms.get("seqwrite-1m.write_bw_bytes_per_s"), scale=MB),
        shown(ms.get("randread-4k.read_iops"), scale=1000),
        shown(ms.get("randread-4k.read_clat_p99_ns"), scale=1e6),
        at,
        ceiling(ms, row.ceiling),
    ]


def ceiling(ms: Measured, cell: SweepCell | None) -> str:
    """The ceiling, how it was reached, and the best single read beside it:
    ``1,010 (bs 4m, 2 jobs × QD 8, mean of its re-runs); best single read 1,550``. The ceiling is a mean,
    not the winner of many noisy draws (a reader found a one-off 1,550 shown where re-runs gave 1,008)."""
    if cell is None:
        return "—"
    where = configuration(SweepPoint(**cell.model_dump()))
    value = shown(ms.get(f"{CEILING_CELL}.read_bw_bytes_per_s"), scale=MB)
    best = shown(ms.get(f"{CEILING_CELL}.best_read_bw_bytes_per_s"), scale=MB)
    raised = ms.get(f"{CEILING_CELL}.raised_by")
    if raised is not None:
        fio = shown(ms.get(f"{CEILING_CELL}.fio_read_bw_bytes_per_s"), scale=MB)
        by = str(raised.value).split(" read ")[0]  # the read that raised it: "KV restore, parallel readers"
        return f"{value} ({by}: faster than fio's {fio} at {where}); best single read {best}"
    return f"{value} ({where}, mean of its re-runs); best single read {best}"


def work_cells(host: str, volume: str, row: G2Row) -> list[str]:
    ms = measured(row)
    return [
        host,
        volume,
        shown(ms.get("kv_restore.serial.read_bw_bytes_per_s"), scale=MB),
        shown(ms.get("kv_restore.parallel.read_bw_bytes_per_s"), scale=MB),
        speedup(ms),
        shown(ms.get("kv_restore.parallel.latency_p50_s")),
        shown(ms.get("model_load.sequential.read_bw_bytes_per_s"), scale=MB),
        shown(ms.get("model_load.parallel.read_bw_bytes_per_s"), scale=MB),
        shown(ms.get("checkpoint.write_bw_bytes_per_s"), scale=MB),
        shown(ms.get("checkpoint.readback_bw_bytes_per_s"), scale=MB),
    ]


def speedup(ms: Measured) -> str:
    """The parallel KV restore over the serial one: ``2.87×``."""
    serial, parallel = (ms.get(f"kv_restore.{k}.read_bw_bytes_per_s") for k in ("serial", "parallel"))
    if serial and parallel and isinstance(serial.value, float) and isinstance(parallel.value, float):
        return f"{parallel.value / serial.value:.2f}×"
    return "—"


def cells(key: str, row: G2Row, table_key: str) -> Cells:
    """One host/volume's row of the ``fio`` or ``workloads`` table."""
    host, _, volume = key.partition("/")
    return [(fio_cells if table_key == "fio" else work_cells)(host, volume, row)]


def sections(stored: Mapping[str, G2Row]) -> list[Section]:
    """The G2 sections of the report, from every stored row."""
    ordered = in_order(stored)
    fio = [c for k, r in ordered for c in cells(k, r, "fio")]
    work = [c for k, r in ordered for c in cells(k, r, "workloads")]
    return [
        table("G2 fio baseline (cold, O_DIRECT, mean of repeats)", FIO_COLUMNS, fio, FIO_NOTE),
        table("G2 storage-level workloads (kvgate agent, cold)", WORK_COLUMNS, work, WORK_NOTE),
    ]


def same_job_elsewhere(
    profile: object, stored: G2Row | None, job_name: str, measured: float | None = None
) -> str:
    """The matrix job's other runs in this G2 run, in words: its block size and I/Os in flight in the
    sweep, and the ceiling's re-runs where they are that job. A reader found one job shown at three
    speeds on three pages, the first with its repeats' CV of 2.3 % beside it; and, with ``measured``
    (the job's own figure), a spread past APART said as such (5.72, 8.83 and 5.71 GB/s unflagged)."""
    found, apart = job_elsewhere(profile, stored, job_name, measured)
    if not found:
        return ""
    # the sweep keeps a cell's block size and I/Os in flight, not how they split into jobs × depth
    said = f"its block size and I/Os in flight elsewhere in this run: {', '.join(found)}"
    return f"{said} — {apart}" if apart else said


def job_elsewhere(
    profile: object, stored: G2Row | None, job_name: str, measured: float | None = None
) -> tuple[list[str], str]:
    """The job's other runs at its setting, each as '<rate> (<where>)', and how far apart they and
    ``measured`` lie when past APART ('' otherwise)."""
    jobs, sweep = getattr(profile, "jobs", {}), getattr(profile, "sweep", None)
    job = jobs.get(job_name)
    if job is None or stored is None or sweep is None or sweep.rw != job.rw:
        return [], ""
    in_flight = job.numjobs * job.iodepth
    points = [(str(p[0]) if len(p) == 3 else "1m", p[-2], p[-1]) for p in stored.sweep]  # [bs,] P, B/s
    same = [bw for bs, parallelism, bw in points if (bs, parallelism) == (job.bs, in_flight)]
    found = [f"{rate(bw)} (the sweep)" for bw in same]
    ms = stored.measurements
    cell = [
        m.value if (m := ms.get(f"{CEILING_CELL}.{k}")) else None for k in ("bs_bytes", "numjobs", "iodepth")
    ]
    rerun = ms.get(f"{CEILING_CELL}.fio_read_bw_bytes_per_s") or ms.get(f"{CEILING_CELL}.read_bw_bytes_per_s")
    if rerun is not None and cell == [parse_size(job.bs), job.numjobs, job.iodepth]:
        found.append(f"{rate(rerun.value)} (the read ceiling's re-runs, their mean)")
        same.append(rerun.value if isinstance(rerun.value, int | float) else 0.0)
    rates = [float(v) for v in (measured, *same) if isinstance(v, int | float) and v > 0]
    if not found or len(rates) < 2 or max(rates) <= (1 + APART) * min(rates):
        return found, ""
    spread = human(max(rates) / min(rates) - 1, "ratio")
    return found, (
        f"{spread} apart at one setting, past what its repeats' CV says: "
        "this volume's rate was not steady within the run (a cache below the host, other I/O)"
    )


APART = 0.25  # one fio setting's runs in one G2 run further apart than this: the rate is not steady


def rate(value: object) -> str:
    return human(value, "B/s")


# a parallel reader's figure and the one-reader figure it is read against
ONE_READER = {
    "kv_restore.parallel.read_bw_bytes_per_s": (
        "kv_restore.serial.read_bw_bytes_per_s",
        "one reader per request",
    ),
    "model_load.parallel.read_bw_bytes_per_s": (
        "model_load.sequential.read_bw_bytes_per_s",
        "one thread of buffered reads",
    ),
}


def against_one_reader(stored: G2Row | None, metric: str) -> str:
    """'0.93× one reader per request (6.93 GB/s): no faster' — a reader found parallel readers no faster
    than one only in the workloads table, under a page-1 figure that read as the parallel path's gain."""
    pair = ONE_READER.get(metric)
    if stored is None or pair is None:
        return ""
    many, one = (stored.measurements.get(m) for m in (metric, pair[0]))
    if many is None or one is None or many.invalid_reason or one.invalid_reason:
        return ""
    if not all(isinstance(v, int | float) and v > 0 for v in (many.value, one.value)):
        return ""
    ratio = float(many.value) / float(one.value)  # type: ignore[arg-type]
    return f"{ratio:.2f}× {pair[1]} ({rate(one.value)})" + (": no faster" if ratio < 1.05 else "")
