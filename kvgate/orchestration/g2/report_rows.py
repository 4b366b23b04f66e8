"""What G2 keeps in run.json for its report: each volume's numbers (``g2_rows``), not its table cells.

Rows are kept per host/volume, so a resumed run adds its rows to the earlier ones. The tables
are laid out when the report is rendered (kvgate.report.g2_tables), the bandwidth-vs-parallelism
chart drawn by kvgate.report.plots: a better formatter changes every stored run's tables.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from kvgate.orchestration.g2.measure import VolumeResult
from kvgate.record import measurements_to_record

GB = 1e9


def row(r: VolumeResult) -> dict[str, Any]:
    """One host/volume's measurements, knee, ceiling cell and sweep points, as numbers."""
    return {
        "measurements": measurements_to_record(r.measurements, evidence=False),
        "knee": None if r.knee is None else asdict(r.knee),  # parallelism and bs: the chart's knee mark
        "ceiling": None if r.ceiling is None else asdict(r.ceiling),
        "sweep": r.sweep,
    }


def series(rows: dict[str, dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """One chart line per host/volume and block size (rows stored before block sizes: one line each)."""
    out: dict[str, list[tuple[int, float]]] = {}
    for key in sorted(rows):
        for point in rows[key]["sweep"]:
            *bs, parallelism, bw = point
            out.setdefault(f"{key} {bs[0]}" if bs else key, []).append((int(parallelism), float(bw)))
    return out


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
