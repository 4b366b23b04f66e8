"""Real sealed G1 runs of this machine for the tests of hostile run directories (issue 23)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def kvgate(*args: str, timeout: float = 60, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The real command line, run as a user runs it (stdin closed: nothing may wait for a person)."""
    cmd = [sys.executable, "-m", "kvgate.cli", *args]
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
    )


def g1_inventory(where: Path, *, threads: int) -> Path:
    """This machine, expected to have at least ``threads`` CPU threads (4096: a G1 that fails)."""
    expect = {"cpu": {"threads": threads}, "pcie_full_link": False}  # as inventory/local.yaml: a VM
    data = {
        "site": "sealed",
        "hosts": {"here": {"transport": "local", "roles": ["control"], "expect": expect}},
    }
    path = where / f"inv-{threads}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def g1_run(where: Path, *, threads: int, code: int) -> Path:
    """One real G1 run under ``where``/results, sealed as every run ends; its exit code must be ``code``."""
    results = where / "results"
    proc = kvgate(
        "run",
        "g1",
        "--inventory",
        str(g1_inventory(where, threads=threads)),
        "--results",
        str(results),
        "--no-pdf",
    )
    assert proc.returncode == code, proc.stderr
    (run,) = (results / "sealed").iterdir()
    return run


def copy_of(run: Path, tmp_path: Path) -> Path:
    """The run in a results root of its own, as a user would hand it over."""
    copy = tmp_path / "results" / "sealed" / run.name
    shutil.copytree(run, copy, symlinks=True)
    return copy


def said(proc: subprocess.CompletedProcess[str], code: int, *expected: str) -> str:
    """Exit ``code``, each expected text in the (re-wrapped) message, and no traceback."""
    text = " ".join(proc.stderr.split())
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in text, text
    assert "internal error" not in text, text
    for e in expected:
        assert e in text, text
    return text
