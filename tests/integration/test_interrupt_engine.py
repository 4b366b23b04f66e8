"""A run that loses its CI job or its terminal in the middle of G3: the engine goes with the run.

A CI job cancelled or past its timeout gets SIGTERM; a dropped SSH session to the control node
hangs up the run's terminal (SIGHUP). Python's default for both is to die on the spot: the
llama.cpp server G3 started in its own session lived on (holding, in the lab, its GPUs), run.json
stayed "running" and the scratch directory stayed behind. kvgate now stops as on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from gate_cli import REPO, pids, running
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

from kvgate.configuration.inventory import engine_port, port_span

pytestmark = LLAMA_ENGINE


def g3_command(tmp_path: Path, port: int) -> list[str]:
    """`kvgate run g3` on one llama.cpp deployment whose tier is on a scratch directory."""
    (tmp_path / "scratch").mkdir()
    engine = {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute", "port": port}
    inv = {
        "site": "cut",
        "scale": "smoke",
        "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["engine", "storage-client"]}},
        "volumes": {"scratch": {"path": str(tmp_path / "scratch"), "kind": "candidate", "scratch": True}},
        "engines": {"tiny": engine | {"volume": "scratch"}},
    }
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(inv))
    cmd = [sys.executable, "-m", "kvgate.cli", "run", "g3", "--inventory", str(tmp_path / "inv.yaml")]
    return [*cmd, "--results", str(tmp_path / "r"), "--no-pdf", "--force-gate-order", "test: cut short"]


def cut_once_its_engine_runs(
    gate: subprocess.Popen[bytes], port: int, cut: Callable[[], None], drain: Callable[[], None]
) -> list[int]:
    """Wait for G3's engine, ``cut`` the run, wait for kvgate to end; the engine pids left after it."""
    twin = engine_port(port, 1, port_span())  # the recompute engine's slot, beside the first instance
    engines = [f"--port {port} ", f"--port {twin} "]  # the tier engine, its recompute twin
    try:
        deadline = time.monotonic() + 600
        while not any(running(e) for e in engines):
            assert gate.poll() is None, "G3 ended before its engine started"
            assert time.monotonic() < deadline, "G3 never started its engine"
            drain()
        cut()
        gate.wait(timeout=120)
        return [pid for e in engines for pid in pids(e)]
    finally:
        if gate.poll() is None:
            os.killpg(gate.pid, signal.SIGKILL)
            gate.wait()  # reaped: a Popen still running warns when collected, in whichever test
        for pid in (p for e in engines for p in pids(e)):  # a failed test must not load the next ones
            os.kill(pid, signal.SIGKILL)


def assert_interrupted_cleanly(tmp_path: Path, gate: subprocess.Popen[bytes], left: list[int]) -> None:
    assert gate.returncode == 5  # interrupted
    assert left == [], "the engine outlived the run"
    (run,) = (tmp_path / "r" / "cut").glob("g3-*")
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert (run / "report.html").is_file()  # the partial run rendered
    assert list((tmp_path / "scratch").iterdir()) == []  # the tier's files removed


def test_sigterm_during_g3_stops_its_engines_and_leaves_a_resumable_run(tmp_path: Path) -> None:
    port, err = free_port_pair(), tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        gate = subprocess.Popen(g3_command(tmp_path, port), cwd=REPO, stderr=stderr, start_new_session=True)

    def sigterm() -> None:  # to kvgate alone, as `kill` and GitLab Runner send it
        gate.send_signal(signal.SIGTERM)

    left = cut_once_its_engine_runs(gate, port, sigterm, lambda: time.sleep(0.2))
    assert_interrupted_cleanly(tmp_path, gate, left)
    resume = f"resume with: kvgate run g3 --resume {tmp_path / 'r'}"
    assert resume in " ".join(err.read_text().split())


def test_a_dropped_terminal_during_g3_stops_its_engines_and_leaves_a_resumable_run(tmp_path: Path) -> None:
    """kvgate on a pseudo-terminal, as over SSH; closing its other end hangs it up (SIGHUP)."""
    port, (terminal, its_side) = free_port_pair(), pty.openpty()
    # a session of its own with the terminal as its controlling one; SIGHUP's default restored, as a
    # login shell has it (a suite started under nohup ignores it, and kvgate keeps an ignored SIGHUP
    # ignored); env and setsid exec: the same pid
    cmd = ["env", "--default-signal=HUP", "setsid", "--ctty", *g3_command(tmp_path, port)]
    gate = subprocess.Popen(cmd, cwd=REPO, stdin=its_side, stdout=its_side, stderr=its_side)
    os.close(its_side)

    def drain() -> None:  # read what it shows, as a terminal does, or its writes would block
        if select.select([terminal], [], [], 0.2)[0]:
            os.read(terminal, 65536)

    left = cut_once_its_engine_runs(gate, port, lambda: os.close(terminal), drain)
    assert_interrupted_cleanly(tmp_path, gate, left)
