"""`kvgate history` and the report's comparison on stored runs: an index kept in step with the run
directories, and a history.sqlite that is checked, never written through a link or into a run."""

from __future__ import annotations

import re
import shutil
import sqlite3
import xml.etree.ElementTree as ET
from contextlib import closing
from pathlib import Path

from history_runs import SCRATCH, g2_run, kvgate

from kvgate.record import verify_manifest


def sql(path: Path, statement: str) -> None:
    with closing(sqlite3.connect(path)) as con, con:
        con.executescript(statement)


def test_copied_run_directories_are_indexed_without_a_history(tmp_path: Path) -> None:
    g2_run(tmp_path / "ci", 2e9, 1e9)
    g2_run(tmp_path / "ci", 2e9, 1e9)
    shutil.copytree(tmp_path / "ci", tmp_path / "copy")
    done = kvgate("history", "--results", str(tmp_path / "copy"))
    assert done.returncode == 0, done.stderr
    assert "2 indexed run(s)" in done.stdout


def test_rebuild_re_makes_the_index_and_a_gone_run_s_row_is_dropped(tmp_path: Path) -> None:
    a, b = g2_run(tmp_path, 2e9, 1e9), g2_run(tmp_path, 2e9, 1e9)
    assert kvgate("history", "--results", str(tmp_path)).returncode == 0
    shutil.rmtree(a)
    done = kvgate("history", "--results", str(tmp_path))
    assert f"history row lab-a/{a.name} dropped" in done.stderr
    assert "1 indexed run(s)" in done.stdout
    sql(tmp_path / "history.sqlite", "DELETE FROM figures; DELETE FROM runs;")  # an index gone wrong
    done = kvgate("history", "--results", str(tmp_path), "--rebuild")
    assert done.returncode == 0, done.stderr
    assert f"indexed lab-a/{b.name}" in done.stderr
    assert "1 indexed run(s)" in done.stdout


def test_a_link_at_history_sqlite_is_never_written_through(tmp_path: Path) -> None:
    results, outside = tmp_path / "results", tmp_path / "outside"
    run = g2_run(results, 2e9, 1e9)
    outside.mkdir()
    (results / "history.sqlite").symlink_to(outside / "planted.sqlite")
    for args in (("history", "--results", str(results)), ("report", str(run), "--no-pdf")):
        done = kvgate(*args)
        assert done.returncode == 4, (args, done.stderr)
        assert "history.sqlite: cannot open the history store (a symbolic link" in done.stderr
    assert list(outside.iterdir()) == []


def test_history_never_writes_into_a_run_directory(tmp_path: Path) -> None:
    run = g2_run(tmp_path, 2e9, 1e9)
    done = kvgate("history", "--results", str(run))
    assert done.returncode == 4
    assert "not a results root" in done.stderr
    assert not (run / "history.sqlite").exists()
    assert verify_manifest(run).status == "verified"


def test_a_foreign_history_file_is_refused_naming_it(tmp_path: Path) -> None:
    g2_run(tmp_path, 2e9, 1e9)
    sql(tmp_path / "history.sqlite", "CREATE TABLE runs (name TEXT); INSERT INTO runs VALUES ('mine');")
    done = kvgate("history", "--results", str(tmp_path))
    assert done.returncode == 4, done.stderr
    assert f"{tmp_path / 'history.sqlite'}: not a kvgate history" in done.stderr
    rebuilt = kvgate("history", "--results", str(tmp_path), "--rebuild")
    assert rebuilt.returncode == 4  # someone's file is never replaced
    (tmp_path / "history.sqlite").write_text("notes, not a database\n")
    assert kvgate("history", "--results", str(tmp_path)).returncode == 4


def test_a_text_figure_in_the_history_is_refused_naming_it(tmp_path: Path) -> None:
    a = g2_run(tmp_path, 2e9, 1e9)
    assert kvgate("report", str(a), "--no-pdf").returncode == 0
    sql(tmp_path / "history.sqlite", "UPDATE figures SET value = 'fast' WHERE figure LIKE '%scratch%';")
    done = kvgate("report", str(g2_run(tmp_path, 2e9, 1e9)), "--no-pdf")
    assert done.returncode == 4, done.stderr
    assert f"figure '{SCRATCH}': a value or noise that is not a number" in done.stderr
    assert "history.sqlite" in done.stderr


def test_a_regression_is_a_junit_failure_and_named_on_page_1(tmp_path: Path) -> None:
    assert kvgate("report", str(g2_run(tmp_path, 2e9, 1e9)), "--no-pdf").returncode == 0
    run = g2_run(tmp_path, 1e9, 1e9)
    assert kvgate("report", str(run), "--no-pdf").returncode == 0
    (failure,) = ET.parse(run / "junit.xml").getroot().iter("failure")
    assert failure.get("type") == "REGRESSION"
    assert failure.get("message", "").startswith(f"{SCRATCH}: 2 GB/s → 1 GB/s")
    html = (run / "report.html").read_text()
    page1 = re.sub(r"<[^>]+>", "", html[html.index('<header class="cover">') : html.index("</header>")])
    assert "1 figure regressed against the previous comparable run" in " ".join(page1.split())
    assert SCRATCH in page1
