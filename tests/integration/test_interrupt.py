"""Ctrl-C in the middle of a gate: prompt exit, partial run marked interrupted, scratch cleaned."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(300)


def test_ctrl_c_during_g2_stops_promptly_and_leaves_a_readable_partial_run(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        yaml.safe_dump(
            {
                "site": "intr",
                "scale": "smoke",
                "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["storage-client"]}},
                "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
            }
        )
    )
    cmd = [
        sys.executable,
        "-m",
        "kvgate.cli",
        "run",
        "g2",
        "--inventory",
        str(inv),
        "--results",
        str(tmp_path / "r"),
        "--force-gate-order",
        "test",
        "--no-pdf",
    ]
    gate = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "r").glob("intr/g2-*/artifacts/here/g2/scratch/fio/*")):
        assert time.monotonic() < deadline, "the gate never started measuring"
        time.sleep(0.2)

    gate.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = gate.communicate(timeout=120)

    assert time.monotonic() - sent < 30, "Ctrl-C must not wait for the measurement to finish"
    assert gate.returncode == 5, err
    (run,) = (tmp_path / "r" / "intr").glob("g2-*")
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "interrupted"
    assert meta["ended_at"]
    assert (run / "report.html").is_file()
    assert "--resume" in " ".join(err.split())
    assert list(scratch.iterdir()) == []  # our files removed even after the interrupt
