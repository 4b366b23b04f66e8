"""Run the real ``kvgate`` command from a test; a run that hangs is interrupted as a person would.

``subprocess.run(timeout=...)`` kills the command with SIGKILL, so the engines it
started in their own sessions live on and load the machine for every later test. A
run past its time gets Ctrl-C instead (SIGINT to its process group: the CLI stops and
reaps its engines), then SIGKILL if it is still there two minutes later, and the test
fails with the end of its output. A test that sends Ctrl-C itself waits with ``after_ctrl_c``:
a run that does not stop shows where each of its threads stood (faulthandler, on SIGABRT).
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REAP_S = 120.0
# a kvgate child that gets SIGABRT prints every thread's stack before it dies
CLI_ENV = os.environ | {"PYTHONFAULTHANDLER": "1"}


def run_cli(cmd: list[str], *, timeout_s: float, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """A ``kvgate`` command line to its end; past ``timeout_s``, interrupted and a test failure."""
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        err = _interrupt(proc)
        pytest.fail(f"{' '.join(cmd[2:])}: not done in {timeout_s:.0f} s, interrupted\n{err[-3000:]}")
    except BaseException:  # the test's own timeout, or Ctrl-C: the run's engines must not outlive it
        _interrupt(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def after_ctrl_c(proc: subprocess.Popen[str], timeout_s: float) -> tuple[str, str]:
    """The output of ``proc`` (started with ``env=CLI_ENV``), which was sent Ctrl-C; a test failure
    showing its threads' stacks when it has not stopped within ``timeout_s``."""
    try:
        return proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            err = proc.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:
            proc.kill()
            err = proc.communicate()[1]
        pytest.fail(f"still running {timeout_s:.0f} s after Ctrl-C; its threads:\n{err[-6000:]}")


def pids(marker: str) -> list[int]:
    """The processes whose command line contains ``marker``, now."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def running(marker: str) -> bool:
    """Whether a process whose command line contains ``marker`` runs now."""
    return bool(pids(marker))


def _interrupt(proc: subprocess.Popen[str]) -> str:
    """Ctrl-C to the run's process group, SIGKILL if it is still there after REAP_S; its stderr."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.communicate(timeout=REAP_S)[1]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.communicate()[1]
