"""Executor for this machine: subprocess, same command semantics as SSH."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

from kvgate.base.errors import CommandTimeout
from kvgate.transport.base import CANCEL, Executor
from kvgate.transport.route import HostRoute


class LocalExecutor(Executor):
    """Run commands on the control node itself (`transport: local` in the inventory)."""

    def __init__(self, host: str = "localhost", *, sudo_allowed: bool = True) -> None:
        self.host = host
        self.sudo_allowed = sudo_allowed

    @classmethod
    def from_host(cls, name: str, host: HostRoute) -> LocalExecutor:
        """The executor for an inventory host with `transport: local`; root needs no sudo."""
        return cls(name, sudo_allowed=host.sudo and os.geteuid() != 0)

    def _execute(self, full: str, cmd: str, timeout_s: float | None) -> tuple[int, str, str]:
        # communicate() drains both pipes concurrently; the outer timeout is a backstop
        # for the remote-side `timeout` wrapper (kvgate.transport.base.wrap).
        proc = subprocess.Popen(
            ["/bin/sh", "-c", full],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            with CANCEL.running(self.host, cmd, lambda: _kill_session(proc)):
                out, err = proc.communicate(timeout=None if timeout_s is None else timeout_s + 10)
        except subprocess.TimeoutExpired as exc:
            _kill(proc)
            raise CommandTimeout(self.host, cmd, timeout_s or 0.0) from exc
        except BaseException:  # Ctrl-C in this thread, or cancelled before communicate(): reap it
            _kill(proc)
            raise
        return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")

    def put(self, local: Path, remote: str) -> None:
        Path(remote).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, remote)

    def get(self, remote: str, local: Path) -> None:
        local.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(remote, local)

    def close(self) -> None:
        pass


def _kill_session(proc: subprocess.Popen[bytes]) -> None:
    """Kill every process of the command's session; safe from any thread.

    Killing the process group is not enough: `timeout` (see `wrap`) moves itself and the
    command into a group of their own, so they outlived a killpg of the shell.
    """
    if proc.returncode is not None:  # reaped: its pid, and so the session id, may be reused
        return
    for pid in _session_members(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _session_members(sid: int) -> list[int]:
    """Pids whose session id is ``sid`` (field 6 of /proc/PID/stat)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it exited while we looked
            continue
        if int(fields[3]) == sid:
            members.append(int(stat.parent.name))
    return members


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the session, reap it and close its pipes (only from the thread that owns ``proc``)."""
    _kill_session(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):  # a D-state child may hold the pipes
        proc.communicate(timeout=5)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
