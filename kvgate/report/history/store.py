"""The history store: one SQLite file under the results root, written as each run is rendered.

The file is an index, re-made from the run directories at any time (kvgate.report.indexing), so
it is trusted no further than it is checked: it is created without following a link, never
inside a run directory, and a file that is not kvgate's history or holds a figure that is not
a number is a StoreError naming it (exit 4), never an internal error.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing, contextmanager
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
TABLES = {"runs": list(RUN_COLUMNS), "figures": ["run_id", "figure", "value", "unit", "better", "noise"]}
REBUILD = "kvgate history --rebuild re-makes it from the run directories"
NOT_NUMBER = "typeof(value) NOT IN ('real', 'integer') OR typeof(noise) NOT IN ('real', 'integer', 'null')"


class History:
    """``<root>/history.sqlite``; created on first use."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / FILE

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the checked store; any SQLite error is a StoreError naming the file."""
        created = self._create()
        try:
            with closing(sqlite3.connect(self.path)) as con:
                self._same_file(created)  # nothing swapped in between: SQLite opens by name
                self._check_schema(con)
                yield con
        except (sqlite3.Error, pd.errors.DatabaseError) as exc:
            raise StoreError(f"{self.path}: not a usable history store ({exc}); {REBUILD}") from None

    def _create(self) -> os.stat_result:
        """Make the file if absent, never through a link, never in a run directory; returns its identity."""
        if not self.root.is_dir():
            raise StoreError(f"{self.root}: not a directory; a results root holds the run directories")
        refuse_run_directory(self.root)
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            why = (
                "a symbolic link: kvgate never writes through one" if self.path.is_symlink() else exc.strerror
            )
            raise StoreError(f"{self.path}: cannot open the history store ({why})") from None
        with os.fdopen(fd) as f:
            found = os.fstat(f.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise StoreError(f"{self.path}: not a regular file; the history store must be one")
        return found

    def _same_file(self, created: os.stat_result) -> None:
        now = os.lstat(self.path)
        if (now.st_dev, now.st_ino) != (created.st_dev, created.st_ino):
            raise StoreError(f"{self.path}: replaced while it was opened (a link planted?); not used")

    def _check_schema(self, con: sqlite3.Connection) -> None:
        found = {
            name: [c[1] for c in con.execute(f"PRAGMA table_info({name!r})")]
            for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if found and found != TABLES:
            raise StoreError(
                f"{self.path}: not a kvgate history (tables {sorted(found)}, expected {sorted(TABLES)}); "
                f"move it away, then {REBUILD}"
            )
        con.executescript(SCHEMA)

    def index(self, run: HistoryEntry) -> None:
        """Add or replace one run (a re-render or a resumed run replaces its earlier entry)."""
        row = tuple(getattr(run, c) for c in RUN_COLUMNS)
        figures = [(run.run_id, f.id, f.value, f.unit, f.better, f.noise) for f in run.figures]
        with self._connect() as con, con:
            con.execute("DELETE FROM figures WHERE run_id = ?", (run.run_id,))
            con.execute(f"INSERT OR REPLACE INTO runs VALUES ({', '.join('?' * len(row))})", row)
            con.executemany("INSERT OR REPLACE INTO figures VALUES (?, ?, ?, ?, ?, ?)", figures)

    def forget(self, run_ids: list[str]) -> None:
        """Drop these runs and their figures (their directories are gone, or the index is rebuilt)."""
        with self._connect() as con, con:
            for table in ("figures", "runs"):
                con.executemany(f"DELETE FROM {table} WHERE run_id = ?", [(r,) for r in run_ids])

    def run_ids(self) -> list[str]:
        with self._connect() as con:
            return [str(r) for (r,) in con.execute("SELECT run_id FROM runs ORDER BY run_id")]

    def runs(self, *, site: str | None = None, gate: str | None = None) -> pd.DataFrame:
        """Indexed runs, oldest first, optionally of one site and gate."""
        where, args = self._filter(site=site, gate=gate)
        query = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs{where} ORDER BY started_at, run_id"
        with self._connect() as con:
            return pd.read_sql_query(query, con, params=args)

    def figures(self, run_id: str) -> pd.DataFrame:
        """One run's figures: figure, value, unit, better, noise; a value that is not a number is refused."""
        with self._connect() as con:
            if con.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
                raise StoreError(f"{self.path}: no run {run_id!r} in the history (kvgate history lists them)")
            bad = con.execute(f"SELECT figure FROM figures WHERE run_id = ? AND ({NOT_NUMBER})", (run_id,))
            if (found := bad.fetchone()) is not None:
                raise StoreError(
                    f"{self.path}: run {run_id!r}, figure {found[0]!r}: a value or noise that is not "
                    f"a number (the file was edited); {REBUILD}"
                )
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
        with self._connect() as con:
            found = con.execute(query, args).fetchone()
        return str(found[0]) if found else None

    @staticmethod
    def _filter(**equal: str | None) -> tuple[str, tuple[str, ...]]:
        given = {k: v for k, v in equal.items() if v}
        where = " AND ".join(f"{k} = ?" for k in given)
        return (f" WHERE {where}" if where else ""), tuple(given.values())


def refuse_run_directory(root: Path) -> None:
    """A results root is never a run directory or inside one: a run's files are sealed by its manifest."""
    resolved = root.resolve()
    for d in (resolved, *resolved.parents):
        if (d / "run.json").is_file() and (d / "artifacts").is_dir():  # as RunStore.create makes one
            raise StoreError(
                f"{root}: inside the run directory {d}, not a results root; the history is kept in "
                f"the results root ({d.parent.parent}), never in a run, whose files its manifest seals"
            )
