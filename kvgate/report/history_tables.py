"""The history and a comparison as terminal tables (rich)."""

from __future__ import annotations

import pandas as pd
from rich.table import Table

from kvgate.report.numbers import human, significant

STYLE = {"regression": "bold red", "improvement": "green", "changed": "yellow"}


def runs_table(runs: pd.DataFrame) -> Table:
    table = Table(title=f"{len(runs)} indexed run(s)")
    for column in ("run_id", "gate", "verdict", "status", "started_at", "inventory_sha256", "kvgate_version"):
        table.add_column(column)
    for r in runs.to_dict("records"):
        table.add_row(
            str(r["run_id"]),
            str(r["gate"]),
            str(r["verdict"]),
            str(r["status"]),
            str(r["started_at"]),
            str(r["inventory_sha256"])[:12],
            str(r["kvgate_version"]),
        )
    return table


def compare_table(diff: pd.DataFrame, run_a: str, run_b: str) -> Table:
    table = Table(title=f"{run_a} → {run_b}")
    for column in ("figure", run_a, run_b, "change", "noise (2 CV)", "status"):
        table.add_column(column)
    for r in diff.to_dict("records"):
        unit = str(r["unit"] or "")
        change = "—" if pd.isna(r["change"]) else f"{significant(float(r['change']) * 100, 2)} %"
        table.add_row(
            str(r["figure"]),
            "—" if pd.isna(r["value_a"]) else human(float(r["value_a"]), unit),
            "—" if pd.isna(r["value_b"]) else human(float(r["value_b"]), unit),
            change,
            f"±{significant(2 * float(r['noise']) * 100, 2)} %",
            str(r["status"]),
            style=STYLE.get(str(r["status"])),
        )
    return table
