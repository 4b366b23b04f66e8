"""Nightly CI's regression gate: `kvgate run --fail-on-regression` exits 6 when a figure got worse."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(240)


def kvgate(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kvgate.cli", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=200, check=False)


def inventory(tmp_path: Path) -> Path:
    (tmp_path / "scratch").mkdir()
    host = {"transport": "local", "roles": ["storage-client"], "expect": {"pcie_full_link": False}}
    host["expect"] |= {"memory": {"total_gib": 1}}
    data = {
        "site": "nightly",
        "hosts": {"here": host},
        "volumes": {"scratch": {"path": str(tmp_path / "scratch"), "kind": "candidate", "scratch": True}},
    }
    path = tmp_path / "nightly.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_figure_worse_than_last_night_beyond_its_noise_exits_6(tmp_path: Path) -> None:
    inv, results = inventory(tmp_path), tmp_path / "results"
    args = [
        "run",
        "g1",
        "--inventory",
        str(inv),
        "--results",
        str(results),
        "--no-pdf",
        "--fail-on-regression",
    ]
    first = kvgate(*args)
    assert first.returncode == 0, first.stderr[-2000:]
    with closing(sqlite3.connect(results / "history.sqlite")) as con, con:  # last night had twice the memory
        changed = con.execute(
            "UPDATE figures SET value = value * 2 WHERE figure LIKE '%memory.total'"
        ).rowcount
    assert changed == 1
    second = kvgate(*args)
    assert second.returncode == 6, second.stderr[-2000:]
    assert "regressed" in second.stderr
    (latest,) = sorted(results.glob("nightly/g1-*"))[-1:]
    assert "1 figure regressed" in (latest / "report.html").read_text()
    listing = kvgate("history", "--results", str(results), "--gate", "g1")
    assert listing.returncode == 0
    assert "2 indexed run(s)" in listing.stdout


GHOST = """
INSERT INTO runs SELECT 'nightly/g1-ghost', site, gate, inventory_sha256, kvgate_version, verdict,
    started_at, status FROM runs;
INSERT INTO figures SELECT 'nightly/g1-ghost', figure, value * 2, unit, better, noise FROM figures;
"""


def test_a_history_row_without_its_run_directory_is_dropped_not_compared_with(tmp_path: Path) -> None:
    inv, results = inventory(tmp_path), tmp_path / "results"
    args = [
        "run",
        "g1",
        "--inventory",
        str(inv),
        "--results",
        str(results),
        "--no-pdf",
        "--fail-on-regression",
    ]
    assert kvgate(*args).returncode == 0
    with (
        closing(sqlite3.connect(results / "history.sqlite")) as con,
        con,
    ):  # a row for no run: twice the memory
        con.executescript(GHOST)
    second = kvgate(*args)
    assert second.returncode == 0, second.stderr[-2000:]
    assert "history: history row nightly/g1-ghost dropped: its run directory is gone" in " ".join(
        second.stderr.split()
    )
