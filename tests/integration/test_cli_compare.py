"""`kvgate compare RUN_A RUN_B` on stored runs: exit 6 on a regression, names kept whole, seals checked,
runs of another gate or inventory refused."""

from __future__ import annotations

from pathlib import Path

from history_runs import FAST, SCRATCH, g2_run, kvgate
from report_runs import build

from kvgate.record import write_manifest


def test_a_regression_exits_6_for_ci(tmp_path: Path) -> None:
    a, b = g2_run(tmp_path, 2e9, 1e9), g2_run(tmp_path, 1e9, 1e9)
    done = kvgate("compare", str(a), str(b))
    assert done.returncode == 6, done.stderr
    assert "1 figure(s) regressed" in done.stderr
    assert kvgate("compare", str(b), str(a)).returncode == 0  # the other way round it improved


def test_two_volumes_print_as_two_figures_with_their_bracketed_names(tmp_path: Path) -> None:
    a, b = g2_run(tmp_path, 2e9, 1e9), g2_run(tmp_path, 2e9, 1e9)
    out = kvgate("compare", str(a), str(b)).stdout
    assert SCRATCH in out
    assert FAST in out


def test_runs_of_another_gate_are_refused_as_not_comparable(tmp_path: Path) -> None:
    g1, g3 = build(tmp_path, "g1"), build(tmp_path, "g3")
    for run in (g1, g3):
        write_manifest(run)
    done = kvgate("compare", str(g1), str(g3))
    assert done.returncode == 4, done.stdout
    assert "not comparable: another gate ('g1', 'g3')" in done.stderr
    assert done.stdout == ""


def test_runs_of_another_inventory_are_refused_as_not_comparable(tmp_path: Path) -> None:
    a, b = g2_run(tmp_path, 2e9, 1e9), g2_run(tmp_path, 1e9, 1e9, sha="cd" * 32)
    done = kvgate("compare", str(a), str(b))
    assert done.returncode == 4
    assert "not comparable: another inventory (sha256)" in done.stderr


def test_an_edited_run_is_refused_naming_its_file_not_shown_as_an_improvement(tmp_path: Path) -> None:
    a, b = g2_run(tmp_path, 2e9, 1e9), g2_run(tmp_path, 2e9, 1e9)
    checks = b / "checks.jsonl"
    checks.write_text(checks.read_text().replace("2000000000.0", "4000000000.0"))
    done = kvgate("compare", str(a), str(b))
    assert done.returncode == 2, done.stdout
    assert "modified after the run: checks.jsonl" in done.stderr
    assert "improvement" not in done.stdout


def test_an_unsealed_run_is_refused(tmp_path: Path) -> None:
    a, b = g2_run(tmp_path, 2e9, 1e9), g2_run(tmp_path, 2e9, 1e9, seal=False)
    done = kvgate("compare", str(a), str(b))
    assert done.returncode == 2
    assert "no manifest" in done.stderr


def test_an_artifact_index_line_that_is_no_entry_is_refused_naming_the_file(tmp_path: Path) -> None:
    a, b = g2_run(tmp_path, 2e9, 1e9), g2_run(tmp_path, 2e9, 1e9, seal=False)
    (b / "artifacts" / "index.jsonl").write_text('[1, 2]\n{"path": "artifacts/x"}\n')
    write_manifest(b)  # sealed as it is: the seal says nothing of what the lines hold
    done = kvgate("compare", str(a), str(b))
    assert done.returncode == 4, done.stderr
    assert "index.jsonl" in done.stderr
    assert "internal error" not in done.stderr
