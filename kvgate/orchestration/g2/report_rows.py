"""What G2 keeps in run.json for its report: each volume's numbers (``g2_rows``), not its table cells.

Rows are kept per host/volume, so a resumed run adds its rows to the earlier ones. The tables
are laid out when the report is rendered (kvgate.report.g2_tables), the bandwidth-vs-parallelism
chart drawn from the sweep by kvgate.report.plots: a better formatter changes every stored run's tables.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from kvgate.orchestration.g2.measure import VolumeResult
from kvgate.record import measurements_to_record


def row(r: VolumeResult) -> dict[str, Any]:
    """One host/volume's measurements, knee, ceiling cell and sweep points, as numbers."""
    return {
        "measurements": measurements_to_record(r.measurements, evidence=False),
        "knee": None if r.knee is None else asdict(r.knee),  # parallelism and bs: the chart's knee mark
        "ceiling": None if r.ceiling is None else asdict(r.ceiling),
        "sweep": r.sweep,
        "virtual": r.virtual,
    }
