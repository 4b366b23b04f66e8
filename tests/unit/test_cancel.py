"""Ctrl-C reaps what it started: local commands and the hosts' threads of a fan-out (real processes)."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvgate.cli.signals import signals_as_interrupt
from kvgate.transport.base import CANCEL
from kvgate.transport.fanout import fan_out
from kvgate.transport.local import LocalExecutor


def processes_with(marker: str) -> list[int]:
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                pids.append(int(cmdline.parent.name))
        except OSError:
            continue
    return [p for p in pids if p != os.getpid()]


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique `sleep` command line; whatever still runs it at the end is killed."""
    text = f"sleep 30.{random.randrange(10**6):06d}"
    yield text
    CANCEL.cancel()  # main's fan_out leaves its threads running: end them before the next test
    CANCEL.reset()
    for pid in processes_with(text):
        os.kill(pid, signal.SIGKILL)


def ctrl_c_in(seconds: float) -> threading.Timer:
    """Deliver SIGINT to the main thread (as a terminal's Ctrl-C does) after ``seconds``."""
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(seconds, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_in_the_thread_running_a_local_command_kills_and_reaps_it(marker: str) -> None:
    # before: the command ran on (`timeout` had left the killed shell's process group) and its
    # Popen and pipes were left to the garbage collector: ResourceWarning "subprocess ... is
    # still running", "unclosed file"
    ctrl_c_in(1)
    with pytest.raises(KeyboardInterrupt):
        LocalExecutor("here").run(marker)
    assert processes_with(marker) == []


def test_ctrl_c_during_a_fan_out_ends_every_host_before_it_returns(marker: str) -> None:
    executors = {name: LocalExecutor(name) for name in ("a", "b", "c")}
    start = time.monotonic()
    ctrl_c_in(1)
    with pytest.raises(KeyboardInterrupt):
        fan_out(executors, lambda ex: ex.run(marker))
    assert time.monotonic() - start < 5  # the commands are killed, not waited for
    assert processes_with(marker) == []  # no host's command runs on
    assert [t.name for t in threading.enumerate() if t.name.startswith("fan_out")] == []


def test_ctrl_c_the_kernel_hands_to_a_hosts_thread_still_stops_the_fan_out(marker: str) -> None:
    # a process-wide SIGINT goes to any thread that does not block it; Python's handler then runs
    # only when the main thread wakes, and a main thread asleep until the hosts finished slept on
    # (a CI run's G2 ignored Ctrl-C for over 120 s)
    def host(ex: LocalExecutor) -> None:
        threading.Timer(0.5, signal.pthread_kill, (threading.get_ident(), signal.SIGINT)).start()
        ex.run(marker)

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        fan_out({"a": LocalExecutor("a")}, host)
    assert time.monotonic() - start < 5
    assert processes_with(marker) == []


def test_sigterm_is_ctrl_c_while_kvgate_runs_and_its_callers_own_again_after() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with signals_as_interrupt(), pytest.raises(KeyboardInterrupt):  # the same path as Ctrl-C
        signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_hang_up_its_launcher_ignores_stays_ignored() -> None:
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as `nohup kvgate …` starts it
    try:
        with signals_as_interrupt():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN  # the run goes on after a hang-up
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
