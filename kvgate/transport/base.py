"""The one seam to a host: the Executor base class and its frozen CommandResult.

Commands are templates with ``%s`` holes; arguments are shell-quoted here and
nowhere else (testinfra ``BaseBackend.quote``):

>>> quote("fio --output=%s %s", "/tmp/out file.json", "job.fio")
"fio --output='/tmp/out file.json' job.fio"
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kvgate.base.errors import CommandFailed, CommandTimeout, Interrupted

DEFAULT_TIMEOUT_S = 120.0
# remote side is bounded too: `timeout` sends TERM, then KILL after this grace
KILL_GRACE_S = 5


def quote(template: str, *args: object) -> str:
    """Fill ``%s`` holes in a command template with shell-quoted arguments."""
    return template % tuple(shlex.quote(str(a)) for a in args)


def wrap(command: str, *, timeout_s: float | None, sudo: bool, env: Mapping[str, str] | None) -> str:
    """Wrap a quoted command with env, sudo and a remote-side `timeout` (testinfra #716)."""
    inner = f"sh -c {shlex.quote(command)}"
    if env:  # names are checked on load; quoted here anyway, and `--` ends env's options
        inner = "env -- " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " " + inner
    if timeout_s is not None:
        inner = f"timeout --kill-after={KILL_GRACE_S} {max(1, int(timeout_s + 0.999))} {inner}"
    if sudo:
        inner = f"sudo -n {inner}"
    return inner


def timed_out(exit_status: int, duration_s: float, timeout_s: float | None) -> bool:
    """True when the remote `timeout` wrapper killed the command (124 TERM, 137 KILL)."""
    return timeout_s is not None and exit_status in (124, 137) and duration_s >= timeout_s - 0.5


class Cancellation:
    """Ctrl-C of a gate run: no command starts afterwards and running ones are ended.

    Executors wrap each command in ``running(host, command, stop)``; ``cancel()``
    calls every registered ``stop`` (kill the local process group, close the SSH
    channel), so worker threads of a fan-out end promptly (teuthology #2031).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._cleaning = threading.local()  # this thread is removing what it made: let it
        self._lock = threading.Lock()
        self._stops: dict[int, Callable[[], None]] = {}

    def cancel(self) -> None:
        self._event.set()
        with self._lock:
            stops = list(self._stops.values())
        for stop in stops:
            stop()

    def reset(self) -> None:
        self._event.clear()

    def check(self, host: str, command: str) -> None:
        if self._event.is_set() and not getattr(self._cleaning, "on", False):
            raise Interrupted(host, command)

    @contextmanager
    def cleanup(self) -> Iterator[None]:
        """Commands of this thread run even after cancel(): removing scratch files, stopping servers."""
        self._cleaning.on = True
        try:
            yield
        finally:
            self._cleaning.on = False

    @contextmanager
    def running(self, host: str, command: str, stop: Callable[[], None]) -> Iterator[None]:
        """Register ``stop`` while a command runs; raise Interrupted if cancelled before or during."""
        key = id(stop)
        with self._lock:
            self._stops[key] = stop
        try:  # checked after registering: a cancel() between a check and the registration ran no stop
            self.check(host, command)
            yield
        except Interrupted:
            raise
        except Exception as exc:  # a command torn down by cancel() fails in its own way: report why
            if self._event.is_set() and not getattr(self._cleaning, "on", False):
                raise Interrupted(host, command) from exc
            raise
        finally:
            with self._lock:
                self._stops.pop(key, None)
        self.check(host, command)


CANCEL = Cancellation()


@dataclass(frozen=True)
class CommandResult:
    """What one command did on one host."""

    host: str
    command: str
    exit_status: int
    stdout: str
    stderr: str
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def check(self) -> CommandResult:
        """Return self if the command succeeded, else raise CommandFailed."""
        if not self.ok:
            raise CommandFailed(self)
        return self

    def tail(self, n: int = 10, stream: str = "stderr") -> str:
        text: str = getattr(self, stream)
        return "\n".join(text.rstrip("\n").splitlines()[-n:])

    def __str__(self) -> str:
        parts = [f"{self.host}: `{self.command}` exited {self.exit_status} after {self.duration_s:.1f} s"]
        for stream in ("stdout", "stderr"):
            if tail := self.tail(5, stream):
                parts.append(f"--- last lines of {stream}:\n{tail}")
        return "\n".join(parts)


class Executor:
    """Runs commands and moves files on one host (testinfra's ``BaseBackend``).

    ``run`` is shared: quote, wrap, honour Ctrl-C, time it, spot the remote time-out. A transport
    supplies ``_execute`` (how one wrapped command runs there, to its exit status, stdout and
    stderr, raising CommandTimeout itself when its own deadline passes), ``put``, ``get`` and ``close``.
    """

    host: str
    sudo_allowed: bool

    def run(
        self,
        command: str,
        *args: object,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        check: bool = False,
        sudo: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run ``quote(command, *args)``; raise CommandTimeout when it overruns."""
        cmd = quote(command, *args)
        full = wrap(cmd, timeout_s=timeout_s, sudo=sudo and self.sudo_allowed, env=env)
        CANCEL.check(self.host, cmd)
        start = time.monotonic()
        status, out, err = self._execute(full, cmd, timeout_s)
        result = CommandResult(self.host, cmd, status, out, err, time.monotonic() - start)
        if timed_out(result.exit_status, result.duration_s, timeout_s):
            raise CommandTimeout(self.host, cmd, timeout_s or 0.0, result.tail(5))
        return result.check() if check else result

    def _execute(self, full: str, cmd: str, timeout_s: float | None) -> tuple[int, str, str]:
        raise NotImplementedError

    def put(self, local: Path, remote: str) -> None:
        """Copy a local file to the host."""
        raise NotImplementedError

    def get(self, remote: str, local: Path) -> None:
        """Copy a file from the host."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the connection; idempotent."""
        raise NotImplementedError
