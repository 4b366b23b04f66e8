"""A sealed run edited after its end is refused by every command that would use it (issue 23 item 2).

The runs are real G1 runs of this machine through the real `kvgate` command, edited as a
forger would. Before this file, `--resume` of a FAIL run edited to PASS kept the forged
lines, wrote a fresh manifest, read "verified unmodified" and exited 0; the gate order
refused an edited G1 run with exit 4 as if it were a usage error.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.sealed_g1 import copy_of, g1_run, kvgate, said

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def sealed_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A failed and a passed G1 run of this machine, sealed by kvgate as every run ends."""
    return {
        "failed": g1_run(tmp_path_factory.mktemp("failed"), threads=4096, code=1),
        "passed": g1_run(tmp_path_factory.mktemp("passed"), threads=1, code=0),
    }


def forge_pass(run: Path) -> None:
    """Every FAIL line of checks.jsonl edited to PASS, the rest left as kvgate wrote it."""
    text = (run / "checks.jsonl").read_text()
    assert '"verdict": "FAIL"' in text
    (run / "checks.jsonl").write_text(text.replace('"verdict": "FAIL"', '"verdict": "PASS"'))


def modified(proc: subprocess.CompletedProcess[str], *expected: str) -> None:
    said(proc, 2, *expected)


def test_resume_of_a_failed_run_edited_to_pass_is_refused_and_leaves_the_seal_alone(
    sealed_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = copy_of(sealed_runs["failed"], tmp_path)
    seal = (run / "manifest.json").read_bytes()
    forge_pass(run)
    proc = kvgate("run", "g1", "--resume", str(run), "--results", str(tmp_path / "results"), "--no-pdf")
    modified(proc, str(run), "modified after the run: checks.jsonl", "--resume refused")
    assert (run / "manifest.json").read_bytes() == seal  # not sealed anew over the forged lines
    assert json.loads((run / "run.json").read_text())["resumes"] == []
    report = kvgate("report", str(run), "--no-pdf")
    assert report.returncode == 2
    assert "modified after the run: checks.jsonl" in report.stderr


def test_resume_of_an_edited_run_whose_manifest_was_deleted_is_refused(
    sealed_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = copy_of(sealed_runs["failed"], tmp_path)
    forge_pass(run)
    (run / "manifest.json").unlink()
    proc = kvgate("run", "g1", "--resume", str(run), "--results", str(tmp_path / "results"), "--no-pdf")
    modified(proc, "manifest.json (missing, though run.json says the run ended)")
    assert not (run / "manifest.json").exists()


def test_an_edited_passed_g1_run_does_not_open_g2_and_says_it_was_modified(
    sealed_runs: dict[str, Path], tmp_path: Path
) -> None:
    run = copy_of(sealed_runs["passed"], tmp_path)
    facts = run / "facts" / "here.json"
    facts.write_text(facts.read_text().replace('"here"', '"elsewhere"', 1) + " ")
    inventory = json.loads((run / "run.json").read_text())["inventory"]["path"]
    proc = kvgate("run", "g2", "--inventory", inventory, "--results", str(tmp_path / "results"), "--no-pdf")
    modified(proc, "modified after the run: facts/here.json", "g2's gate order refused")
    assert sorted(p.name for p in (tmp_path / "results" / "sealed").iterdir()) == [run.name]  # no g2 run
