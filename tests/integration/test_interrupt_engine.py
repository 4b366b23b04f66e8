"""SIGTERM in the middle of G3 (a CI job cancelled or past its timeout): the engine goes with the run.

Python's default for SIGTERM is to die on the spot: the llama.cpp server G3 started in its own
session lived on (holding, in the lab, its GPUs), run.json stayed "running" and the scratch
directory stayed behind. kvgate now takes SIGTERM as Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml
from gate_cli import REPO, pids, running
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

pytestmark = LLAMA_ENGINE


def test_sigterm_during_g3_stops_its_engines_and_leaves_a_resumable_run(tmp_path: Path) -> None:
    scratch, port = tmp_path / "scratch", free_port_pair()
    scratch.mkdir()
    engine = {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute", "port": port}
    inv = {
        "site": "term",
        "scale": "smoke",
        "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["engine", "storage-client"]}},
        "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
        "engines": {"tiny": engine | {"volume": "scratch"}},
    }
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    cmd = [sys.executable, "-m", "kvgate.cli", "run", "g3", "--inventory", str(tmp_path / "inv.yaml")]
    cmd += ["--results", str(tmp_path / "r"), "--no-pdf", "--force-gate-order", "test: SIGTERM"]
    engines = [f"--port {port} ", f"--port {port + 1} "]  # the tier engine, its recompute twin
    gate = subprocess.Popen(cmd, cwd=REPO, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not any(running(e) for e in engines):
            assert gate.poll() is None, gate.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "G3 never started its engine"
            time.sleep(0.2)
        gate.send_signal(signal.SIGTERM)  # to kvgate alone, as `kill` and GitLab Runner send it
        _, err = gate.communicate(timeout=120)
        left = [pid for e in engines for pid in pids(e)]
    finally:
        if gate.poll() is None:
            os.killpg(gate.pid, signal.SIGKILL)
        for pid in (p for e in engines for p in pids(e)):  # a failed test must not load the next ones
            os.kill(pid, signal.SIGKILL)

    assert gate.returncode == 5, err[-3000:]  # interrupted
    assert left == [], "the engine outlived the run"
    (run,) = (tmp_path / "r" / "term").glob("g3-*")
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert list(scratch.iterdir()) == []  # the tier's files removed
    assert f"resume with: kvgate run g3 --resume {run}" in " ".join(err.split())
