"""G2 report sections: baseline tables (the bandwidth-vs-parallelism chart is drawn by kvgate.report.plots).

Rows are kept per host/volume in run.json (`g2_rows`), so a resumed run adds its
rows to the earlier ones; the sections are rebuilt from all of them.
"""

from __future__ import annotations

from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.orchestration.g2.measure import VolumeResult
from kvgate.probes.fio.ceiling import CEILING_CELL, configuration

GB = 1e9


def _value(ms: dict[str, Measurement], metric: str, scale: float = 1.0, digits: int = 2) -> str:
    m = ms.get(metric)
    if m is None or not isinstance(m.value, (int, float)):
        return "—"
    text = f"{m.value / scale:.{digits}f}"
    return f"{text} (INVALID)" if m.invalid_reason else text


def row(r: VolumeResult) -> dict[str, Any]:
    """One host/volume's numbers for the tables, plus its sweep points for the chart."""
    ms = r.measurements
    knee = f"{r.knee.parallelism} @ {r.knee.bw_bytes_per_s / GB:.2f} (bs {r.knee.bs})" if r.knee else "—"
    fio = [
        r.host,
        r.volume,
        _value(ms, "seqread-1m.read_bw_bytes_per_s", GB),
        _value(ms, "seqwrite-1m.write_bw_bytes_per_s", GB),
        _value(ms, "randread-4k.read_iops", 1000, 1),
        _value(ms, "randread-4k.read_clat_p99_ns", 1e6),
        knee,
        _ceiling(r),
    ]
    serial, parallel = (ms.get(f"kv_restore.{k}.read_bw_bytes_per_s") for k in ("serial", "parallel"))
    speedup = "—"
    if serial and parallel and isinstance(serial.value, float) and isinstance(parallel.value, float):
        speedup = f"{parallel.value / serial.value:.2f}×"
    work = [
        r.host,
        r.volume,
        _value(ms, "kv_restore.serial.read_bw_bytes_per_s", GB),
        _value(ms, "kv_restore.parallel.read_bw_bytes_per_s", GB),
        speedup,
        _value(ms, "kv_restore.parallel.latency_p50_s", 1, 3),
        _value(ms, "model_load.sequential.read_bw_bytes_per_s", GB),
        _value(ms, "model_load.parallel.read_bw_bytes_per_s", GB),
        _value(ms, "checkpoint.write_bw_bytes_per_s", GB),
        _value(ms, "checkpoint.readback_bw_bytes_per_s", GB),
    ]
    raw_knee = None if r.knee is None else {"parallelism": r.knee.parallelism, "bs": str(r.knee.bs)}
    return {"fio": fio, "workloads": work, "sweep": r.sweep, "knee": raw_knee}  # knee: for the chart


def _ceiling(r: VolumeResult) -> str:
    """The re-measured ceiling and how it was reached: ``2.31 (bs 4m, 4 jobs × QD 8)``."""
    if r.ceiling is None:
        return "—"
    return f"{_value(r.measurements, f'{CEILING_CELL}.read_bw_bytes_per_s', GB)} ({configuration(r.ceiling)})"


def series(rows: dict[str, dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """One chart line per host/volume and block size (rows stored before block sizes: one line each)."""
    out: dict[str, list[tuple[int, float]]] = {}
    for key in sorted(rows):
        for point in rows[key]["sweep"]:
            *bs, parallelism, bw = point
            out.setdefault(f"{key} {bs[0]}" if bs else key, []).append((int(parallelism), float(bw)))
    return out


def sections(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The G2 sections of the report, from every stored row."""
    ordered = [rows[k] for k in sorted(rows)]
    fio_cols = [
        "host",
        "volume",
        "seq read GB/s",
        "seq write GB/s",
        "rand read kIOPS",
        "rand read p99 ms",
        "knee (I/Os in flight @ GB/s)",
        "read ceiling GB/s (where)",
    ]
    work_cols = [
        "host",
        "volume",
        "KV restore serial GB/s",
        "KV restore parallel GB/s",
        "parallel/serial",
        "KV restore p50 s",
        "model load sequential GB/s",
        "model load parallel GB/s",
        "checkpoint write GB/s",
        "checkpoint read-back GB/s",
    ]
    return [
        {
            "title": "G2 fio baseline (cold, O_DIRECT, mean of repeats)",
            "template": "table.html",
            "data": {
                "columns": fio_cols,
                "rows": [r["fio"] for r in ordered],
                "note": "Latency percentiles are merged from fio's json+ histograms across jobs and repeats. "
                "Read ceiling: the best cell of the block size × jobs × depth sweep, run again with the "
                "profile's repeats (their mean); the planner and G3 hold restores to it.",
            },
        },
        {
            "title": "G2 storage-level workloads (kvgate agent, cold)",
            "template": "table.html",
            "data": {
                "columns": work_cols,
                "rows": [r["workloads"] for r in ordered],
                "note": "KV restore: all requests concurrently; serial = 1 reader per request, "
                "parallel = several (the R1 serial vs parallel read path).",
            },
        },
    ]


COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def chart(series: dict[str, list[tuple[int, float]]], width: int = 560, height: int = 260) -> str:
    """A small SVG line chart: x = I/Os in flight (log2), y = GB/s; one line per host/volume."""
    points = [p for s in series.values() for p in s]
    if not points:
        empty = '<text x="4" y="24">no sweep measured</text>'
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="40">{empty}</svg>'
    xs = sorted({p for p, _ in points})
    ymax = max(bw for _, bw in points) / GB * 1.1 or 1.0
    left, bottom, right, top = 50, height - 30, width - 10, 10

    def px(x: int) -> float:
        i = xs.index(x)
        return left + (right - left) * (i / max(1, len(xs) - 1))

    def py(bw: float) -> float:
        return bottom - (bottom - top) * (bw / GB / ymax)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="10">',
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#333"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end">{ymax:.2f}</text>',
        f'<text x="{left - 4}" y="{bottom}" text-anchor="end">0 GB/s</text>',
    ]
    parts += [f'<text x="{px(x):.1f}" y="{bottom + 14}" text-anchor="middle">{x}</text>' for x in xs]
    for i, (name, pts) in enumerate(series.items()):
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{px(x):.1f},{py(bw):.1f}" for x, bw in pts)
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        parts.append(
            f'<text x="{right - 4}" y="{top + 12 * (i + 1)}" text-anchor="end" fill="{color}">'
            f"{_xml(name)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
