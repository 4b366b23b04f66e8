"""Executor over SSH (paramiko), with the same command semantics as `LocalExecutor`.

Connects lazily, reconnects once when the connection dropped, reads stdout and
stderr concurrently, and bounds every command twice: remotely with ``timeout
--kill-after`` (`wrap`) and locally with a deadline after which the channel is closed.
A `Heartbeat` notices a link that died silently within `Liveness.dead_after_s` and
the error says "connection lost" with when the host was last heard from.

Usage::

    with SSHExecutor("gpu-01", Host(address="10.0.0.5", user="root")) as ex:
        ex.run("nproc").check().stdout
    # → '64\\n'
"""

from __future__ import annotations

import posixpath
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import paramiko

from kvgate.base.errors import CommandTimeout, TransportError
from kvgate.transport.base import (
    CANCEL,
    KILL_GRACE_S,
    Executor,
)
from kvgate.transport.causes import cause
from kvgate.transport.liveness import DEFAULT_LIVENESS, Heartbeat, Liveness
from kvgate.transport.route import HostRoute
from kvgate.transport.sshroute import (
    CONNECTION_ERRORS,
    SSH_CONFIG,
    close_all,
    connect_route,
    load_ssh_config,
    resolve,
)

T = TypeVar("T")

CLIENT_GRACE_S = KILL_GRACE_S + 5  # local deadline = timeout + this, as in LocalExecutor
CHUNK_BYTES = 1 << 16
LOST_GRACE_S = 1.0  # no exit status: how long to watch whether the connection is dying
# a deadline, and a Ctrl-C that closes the channel from another thread (which cannot wake a
# select() already waiting on it), are noticed at least this often
POLL_S = 0.2


class SSHExecutor(Executor):
    """Run commands and move files on one inventory host over SSH."""

    def __init__(
        self,
        name: str,
        host: HostRoute,
        *,
        ssh_config: Path = SSH_CONFIG,
        liveness: Liveness = DEFAULT_LIVENESS,
    ) -> None:
        self.host = name
        self.route = resolve(host, load_ssh_config(ssh_config))
        self.liveness = liveness
        # root needs no sudo (and minimal hosts have none installed)
        self.sudo_allowed = host.sudo and self.route.target.user != "root"
        self._clients: list[paramiko.SSHClient] = []
        self._heartbeat: Heartbeat | None = None
        self._was_connected = False
        self._lock = threading.RLock()

    @classmethod
    def from_host(cls, name: str, host: HostRoute) -> SSHExecutor:
        """The executor for inventory host ``name`` (used by `kvgate.transport.connect`)."""
        return cls(name, host)

    @property
    def label(self) -> str:
        """``host gpu-01 (root@10.0.0.5:22)``: how errors name this host."""
        return f"host {self.host} ({self.route})"

    # --- commands -------------------------------------------------------------------

    def _execute(self, full: str, cmd: str, timeout_s: float | None) -> tuple[int, str, str]:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s + CLIENT_GRACE_S
        channel = self._start(full, cmd)
        with channel, CANCEL.running(self.host, cmd, channel.close):
            out, err = self._collect(channel, deadline, cmd, timeout_s or 0.0)
            return self._exit_status(channel, cmd), out, err

    def _start(self, full: str, cmd: str) -> paramiko.Channel:
        """Open a session (reconnecting once if needed) and start the command, stdin at EOF."""
        channel = self._open(lambda t: t.open_session(timeout=self.route.timeout_s))
        try:
            channel.exec_command(full)
            channel.shutdown_write()
        except CONNECTION_ERRORS as exc:
            channel.close()
            raise TransportError(f"{self.label}: cannot start `{cmd}`: {self._cause(exc)}") from exc
        return channel

    def _collect(
        self, channel: paramiko.Channel, deadline: float | None, cmd: str, timeout_s: float
    ) -> tuple[str, str]:
        """Read stdout and stderr together until both end and the exit status arrives (or a close).

        The channel's descriptor wakes select() on data, EOF and close, but stays readable once
        EOF has arrived: the exit status that follows is awaited on its own event, not by polling
        the descriptor (that spun thousands of times per command, issue 27).
        """
        out, err = bytearray(), bytearray()

        def wait_s() -> float:
            remaining = POLL_S if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                channel.close()
                raise CommandTimeout(self.host, cmd, timeout_s, "\n".join(_tail(out) + _tail(err)))
            return min(POLL_S, remaining)

        while True:
            ended = channel.eof_received or channel.closed  # read first: data is fed before EOF
            if _drain(channel, out, err):
                continue
            if ended:
                break
            select.select([channel], [], [], wait_s())
        while not channel.status_event.wait(wait_s()):
            pass
        return out.decode(errors="replace"), err.decode(errors="replace")

    def _exit_status(self, channel: paramiko.Channel, cmd: str) -> int:
        """The exit status; a channel that closed because the connection died is a TransportError."""
        status = channel.recv_exit_status() if channel.exit_status_ready() else -1
        if status >= 0:  # -1: none received (the channel was closed under us, or a signal)
            return status
        transport = channel.get_transport()
        if transport is not None:
            transport.join(LOST_GRACE_S)  # a dying server may close the channel just before the TCP link
        if not channel.eof_received or transport is None or not transport.is_active():
            lost = f": {self._lost()}" if self._lost() else ""
            raise TransportError(f"{self.label}: connection lost while running `{cmd}`{lost}")
        return -1  # killed by a signal: paramiko ignores the exit-signal message

    # --- files ----------------------------------------------------------------------

    def put(self, local: Path, remote: str) -> None:
        """Copy a local file to the host over SFTP, creating the remote parent directories."""
        with self._sftp() as sftp:
            self._transfer(lambda: _makedirs(sftp, posixpath.dirname(remote)), "put", remote)
            self._transfer(lambda: sftp.put(str(local), remote), "put", remote)

    def get(self, remote: str, local: Path) -> None:
        """Copy a file from the host over SFTP, creating the local parent directories."""
        local.parent.mkdir(parents=True, exist_ok=True)
        with self._sftp() as sftp:
            self._transfer(lambda: sftp.get(remote, str(local)), "get", remote)

    def _sftp(self) -> paramiko.SFTPClient:
        """A fresh SFTP session on the (re)connected transport.

        A server without the sftp subsystem closes the channel on the request while the link stays
        up: that is said as such, not taken for a lost connection (which also reconnected for nothing).
        """
        channel = self._open(lambda t: t.open_session(timeout=self.route.timeout_s))
        try:
            channel.invoke_subsystem("sftp")
        except CONNECTION_ERRORS as exc:
            channel.close()
            if self._link_down() or self._lost():
                raise TransportError(f"{self.label}: connection lost: {self._cause(exc)}") from exc
            raise TransportError(
                f"{self.label}: the server refused the sftp subsystem, which kvgate uploads and "
                "downloads through (sshd_config: `Subsystem sftp internal-sftp`)"
            ) from exc
        return paramiko.SFTPClient(channel)

    def _transfer(self, fn: Callable[[], object], verb: str, remote: str) -> None:
        """Run an SFTP step; file errors stay OSError (as locally), a dropped link is TransportError."""
        try:
            fn()
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if isinstance(exc, OSError) and not self._link_down():
                raise  # a file error (no such file, permission), as locally
            raise TransportError(f"{self.label}: {verb} {remote} failed: {self._cause(exc)}") from exc

    # --- connection -----------------------------------------------------------------

    def _open(self, fn: Callable[[paramiko.Transport], T]) -> T:
        """Open a channel with ``fn``; if the connection had dropped, reconnect once and retry.

        A link the heartbeat found dead is not retried now (that would add a connect timeout
        to the report); the next command reconnects.
        """
        transport, fresh = self._transport()
        try:
            return fn(transport)
        except CONNECTION_ERRORS as exc:
            if fresh or self._lost():
                raise TransportError(f"{self.label}: connection lost: {self._cause(exc)}") from exc
            why = self._cause(exc)
        with self._lock:
            self._drop()
        transport, _ = self._transport(why)
        try:
            return fn(transport)
        except CONNECTION_ERRORS as exc:
            raise TransportError(f"{self.label}: connection lost: {self._cause(exc)}") from exc

    def _transport(self, why: str | None = None) -> tuple[paramiko.Transport, bool]:
        """The live transport, connecting if there is none; True when it is a new connection.

        ``why``: why the previous connection was given up, for the error if reconnecting fails.
        """
        with self._lock:
            transport = self._clients[-1].get_transport() if self._clients else None
            if transport is not None and transport.is_active():
                return transport, False
            action = self._reconnect_action(why or self._lost())
            self._drop()
            self._clients = connect_route(self.route, self.label, action=action)
            self._was_connected = True
            transport = self._clients[-1].get_transport()
            assert transport is not None  # connect() succeeded
            self._heartbeat = Heartbeat(transport, self.liveness, self.label).start()
            return transport, True

    def _reconnect_action(self, why: str | None) -> str:
        """How a failed (re)connect is worded: why the previous connection ended, if we know."""
        if not self._was_connected:
            return "cannot connect"
        lost = f"connection lost ({why})" if why else "connection lost"
        return f"{lost}; reconnecting once failed"

    def _drop(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        clients, self._clients = self._clients, []
        close_all(clients)

    def _link_down(self) -> bool:
        transport = self._clients[-1].get_transport() if self._clients else None
        return transport is None or not transport.is_active()

    def _lost(self) -> str | None:
        """Why the heartbeat closed the connection (nothing heard for too long), if it did."""
        return self._heartbeat.lost if self._heartbeat is not None else None

    def _cause(self, exc: BaseException) -> str:
        return self._lost() or cause(exc, self.route.timeout_s)

    def close(self) -> None:
        """Close the connection and its jump hosts; idempotent. The next command reconnects."""
        with self._lock:
            self._drop()
            self._heartbeat = None
            self._was_connected = False

    def __enter__(self) -> SSHExecutor:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _drain(channel: paramiko.Channel, out: bytearray, err: bytearray) -> bool:
    """Take whatever is buffered on both streams without blocking; True if anything was read."""
    got = False
    if channel.recv_ready():
        out += channel.recv(CHUNK_BYTES)
        got = True
    if channel.recv_stderr_ready():
        err += channel.recv_stderr(CHUNK_BYTES)
        got = True
    return got


def _tail(data: bytearray, n: int = 5) -> list[str]:
    return data[-4096:].decode(errors="replace").splitlines()[-n:]


def _makedirs(sftp: paramiko.SFTPClient, path: str) -> None:
    """``mkdir -p`` over SFTP."""
    if path in ("", "/", "."):
        return
    try:
        sftp.stat(path)
    except FileNotFoundError:
        _makedirs(sftp, posixpath.dirname(path))
        sftp.mkdir(path)
