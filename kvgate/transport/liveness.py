"""Is an SSH connection alive? Keepalives the server must answer, and a watchdog on the last packet heard.

A link that dies silently (cable pulled, switch port down, route withdrawn) sends
no RST: TCP retransmits for ~15 minutes while a command waits for output that
never comes. paramiko's own keepalive (``Transport.set_keepalive``) asks for no
reply, so silence after it proves nothing. Like OpenSSH's ServerAliveInterval and
ServerAliveCountMax, a `Heartbeat` sends ``keepalive@openssh.com`` *with*
want-reply after `Liveness.keepalive_s` without a packet from the server, and after
`Liveness.dead_after_s` without one it closes the transport: every command and
transfer on it ends at once, and `Heartbeat.lost` says why.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import paramiko
from paramiko.packet import Packetizer

KEEPALIVE_S = 5.0  # silence after which the server is asked for a reply (it answers in milliseconds)
DEAD_AFTER_S = 15.0  # silence after which the connection is lost: ~3 keepalives unanswered
TICK_S = 0.5  # how often the watchdog looks
STARVED_S = 3.0  # a watchdog tick this late means this process was not scheduled: judge afresh


@dataclass(frozen=True)
class Liveness:
    """When to ask the server for a sign of life, and when silence means the link is dead."""

    keepalive_s: float = KEEPALIVE_S
    dead_after_s: float = DEAD_AFTER_S


DEFAULT_LIVENESS = Liveness()


class HeardPacketizer(Packetizer):
    """paramiko's Packetizer, noting when the last whole packet arrived from the server."""

    def __init__(self, socket: Any) -> None:
        super().__init__(socket)
        self.heard_s, self.heard_at = time.monotonic(), time.time()

    def read_message(self) -> tuple[int, paramiko.Message]:
        message: tuple[int, paramiko.Message] = super().read_message()
        self.heard_s, self.heard_at = time.monotonic(), time.time()
        return message


def new_transport(sock: Any, **kwargs: Any) -> paramiko.Transport:
    """``SSHClient.connect(transport_factory=...)``: a Transport whose packetizer notes what it heard."""
    return paramiko.Transport(sock, packetizer_class=HeardPacketizer, **kwargs)


class Heartbeat:
    """Keeps asking one connected transport for a sign of life and closes it when none comes."""

    def __init__(self, transport: paramiko.Transport, liveness: Liveness, label: str) -> None:
        assert isinstance(transport.packetizer, HeardPacketizer), (
            "connect with transport_factory=new_transport"
        )
        self.transport, self.liveness, self.label = transport, liveness, label
        self.heard = transport.packetizer
        self.lost: str | None = None  # why the watchdog closed the transport
        self._stop = threading.Event()

    def start(self) -> Heartbeat:
        for fn, role in ((self._ping, "keepalive"), (self._watch, "watchdog")):
            threading.Thread(target=fn, name=f"ssh {role} {self.label}", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def silent_s(self) -> float:
        return time.monotonic() - self.heard.heard_s

    def _ping(self) -> None:
        """Ask for a reply whenever the server has been silent for keepalive_s; blocks until it comes."""
        while self.transport.is_active() and not self._stop.is_set():
            wait = self.liveness.keepalive_s - self.silent_s()
            if wait > 0:
                self._stop.wait(wait)
                continue
            try:  # wait=True sends want-reply; it returns on the answer or when the transport closes
                self.transport.global_request("keepalive@openssh.com", wait=True)
            except (paramiko.SSHException, EOFError, OSError):
                return  # the transport is going away; whoever uses it next says why

    def _watch(self) -> None:
        judged_from = last_tick = time.monotonic()
        while not self._stop.wait(TICK_S) and self.transport.is_active():
            now = time.monotonic()
            if now - last_tick > STARVED_S:  # we were not running: the silence may be ours, not the link's
                judged_from = now
            last_tick = now
            silent = now - max(self.heard.heard_s, judged_from)
            if silent >= self.liveness.dead_after_s:
                self.lost = self._describe(self.silent_s())
                self.transport.close()
                return

    def _describe(self, silent: float) -> str:
        heard = datetime.fromtimestamp(self.heard.heard_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return (
            f"nothing heard from the host for {silent:.0f} s, keepalives unanswered "
            f"(last heard at {heard}): the link or the host is down"
        )
