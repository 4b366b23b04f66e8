"""SIGTERM and SIGHUP stop a run as Ctrl-C does, while the command line runs.

A CI job that times out or is cancelled gets SIGTERM, then SIGKILL seconds later (GitLab Runner's
shell executor: 10 s); a dropped SSH session to the control node hangs up the run's terminal
(SIGHUP). Python's default for both dies on the spot: the engines the run started on the lab's
hosts lived on, holding their GPUs, run.json stayed "running" and scratch files stayed behind.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn


def _hung_up(_signum: int, _frame: object) -> NoReturn:
    """The terminal went away (an SSH session to the control node dropped): every descriptor on it
    now writes to /dev/null (a write to it would fail, pytest's saved copies of stdout included),
    and the run stops as on Ctrl-C."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in _terminal_fds():
        os.dup2(devnull, fd)
    raise KeyboardInterrupt


def _terminal_fds() -> list[int]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(("/dev/pts/", "/dev/tty")):
                found.append(int(fd))
        except OSError:  # the listing's own descriptor, already closed
            continue
    return found


AS_INTERRUPT = {signal.SIGTERM: signal.default_int_handler, signal.SIGHUP: _hung_up}


@contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP end a run as Ctrl-C does: engines stopped, scratch cleaned, the run left
    interrupted and resumable. A signal the launcher ignores stays ignored (``nohup kvgate …`` runs
    on after a hang-up); only the main thread may set handlers (a test calling main() from a thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in AS_INTERRUPT}
    for sig, handler in AS_INTERRUPT.items():
        if before[sig] != signal.SIG_IGN:
            signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, was in before.items():
            signal.signal(sig, was if was is not None else signal.SIG_DFL)
