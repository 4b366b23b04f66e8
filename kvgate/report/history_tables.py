"""The history and a comparison as terminal tables (rich); cells escaped: 'volume[scratch]' stays whole."""

from __future__ import annotations

import pandas as pd
from rich.markup import escape
from rich.table import Table

from kvgate.report.numbers import human, significant

STYLE = {"regression": "bold red", "improvement": "green", "changed": "yellow"}


def runs_table(runs: pd.DataFrame) -> Table:
    table = Table(title=f"{len(runs)} indexed run(s)")
    for column in ("run_id", "gate", "verdict", "status", "started_at", "inventory_sha256", "kvgate_version"):
        table.add_column(column)
    for r in runs.to_dict("records"):
        sha = str(r["inventory_sha256"])[:12]
        cells = (r["run_id"], r["gate"], r["verdict"], r["status"], r["started_at"], sha, r["kvgate_version"])
        table.add_row(*(escape(str(c)) for c in cells))
    return table


def compare_table(diff: pd.DataFrame, run_a: str, run_b: str) -> Table:
    table = Table(title=escape(f"{run_a} → {run_b}"))
    for column in ("figure", escape(run_a), escape(run_b), "change", "noise (2 CV)", "status"):
        table.add_column(column)
    for r in diff.to_dict("records"):
        unit = str(r["unit"] or "")
        change = "—" if pd.isna(r["change"]) else f"{significant(float(r['change']) * 100, 2)} %"
        table.add_row(
            escape(str(r["figure"])),
            "—" if pd.isna(r["value_a"]) else human(float(r["value_a"]), unit),
            "—" if pd.isna(r["value_b"]) else human(float(r["value_b"]), unit),
            change,
            f"±{significant(2 * float(r['noise']) * 100, 2)} %",
            str(r["status"]),
            style=STYLE.get(str(r["status"])),
        )
    return table
