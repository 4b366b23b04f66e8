"""The history store: one SQLite file under the results root, written as each run is rendered."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pandas as pd

from kvgate.base.errors import StoreError
from kvgate.report.history.entry import HistoryEntry

FILE = "history.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, site TEXT, gate TEXT, inventory_sha256 TEXT, kvgate_version TEXT,
    verdict TEXT, started_at TEXT, status TEXT);
CREATE TABLE IF NOT EXISTS figures (
    run_id TEXT REFERENCES runs(run_id) ON DELETE CASCADE, figure TEXT, value REAL, unit TEXT,
    better TEXT, noise REAL, PRIMARY KEY (run_id, figure));
"""
RUN_COLUMNS = (
    "run_id",
    "site",
    "gate",
    "inventory_sha256",
    "kvgate_version",
    "verdict",
    "started_at",
    "status",
)


class History:
    """``<root>/history.sqlite``; created on first use."""

    def __init__(self, root: Path) -> None:
        self.path = root / FILE

    def _connect(self) -> sqlite3.Connection:
        try:
            con = sqlite3.connect(self.path)
            con.executescript(SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: not a usable history store ({exc})") from None
        return con

    def index(self, run: HistoryEntry) -> None:
        """Add or replace one run (a re-render or a resumed run replaces its earlier entry)."""
        row = tuple(getattr(run, c) for c in RUN_COLUMNS)
        figures = [(run.run_id, f.id, f.value, f.unit, f.better, f.noise) for f in run.figures]
        with closing(self._connect()) as con, con:
            con.execute("DELETE FROM figures WHERE run_id = ?", (run.run_id,))
            con.execute(f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * len(row))})", row)
            con.executemany("INSERT OR REPLACE INTO figures VALUES (?, ?, ?, ?, ?, ?)", figures)

    def runs(self, *, site: str | None = None, gate: str | None = None) -> pd.DataFrame:
        """Indexed runs, oldest first, optionally of one site and gate."""
        where, args = self._filter(site=site, gate=gate)
        query = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs{where} ORDER BY started_at, run_id"
        with closing(self._connect()) as con:
            return pd.read_sql_query(query, con, params=args)

    def figures(self, run_id: str) -> pd.DataFrame:
        """One run's figures: figure, value, unit, better, noise."""
        with closing(self._connect()) as con:
            if con.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise StoreError(f"{self.path}: no run {run_id!r} in the history (kvgate history lists them)")
            query = "SELECT figure, value, unit, better, noise FROM figures WHERE run_id = ? ORDER BY figure"
            return pd.read_sql_query(query, con, params=(run_id,))

    def previous(self, run: HistoryEntry) -> str | None:
        """The last complete comparable run before ``run``: same site, gate and inventory fingerprint."""
        query = (
            "SELECT run_id FROM runs WHERE site = ? AND gate = ? AND inventory_sha256 = ? "
            "AND status = 'complete' AND (started_at < ? OR (started_at = ? AND run_id < ?)) "
            "ORDER BY started_at DESC, run_id DESC LIMIT 1"
        )
        args = (run.site, run.gate, run.inventory_sha256, run.started_at, run.started_at, run.run_id)
        with closing(self._connect()) as con:
            found = con.execute(query, args).fetchone()
        return str(found[0]) if found else None

    @staticmethod
    def _filter(**equal: str | None) -> tuple[str, tuple[str, ...]]:
        given = {k: v for k, v in equal.items() if v}
        where = " AND ".join(f"{k} = ?" for k in given)
        return (f" WHERE {where}" if where else ""), tuple(given.values())
