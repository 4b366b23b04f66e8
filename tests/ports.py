"""Free loopback ports for the engines the integration tests start.

They come from below the kernel's ephemeral range (ip_local_port_range), so that
no client connection made while a test runs (thousands of requests, health polls)
can take an engine's port as its own local port before the engine binds it.
"""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

from kvgate.configuration.inventory import engine_port, port_span


def _below_ephemeral() -> range:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    return range(min(20000, low // 2), low)


def free_port_pair(pairs: int = 1) -> int:
    """A port p with the ports of the next 2·pairs − 1 engine slots at TP 1 free too (instance i: tier in
    slot 2i, recompute in 2i + 1; kvgate.configuration.inventory.engine_port)."""
    ports, span = _below_ephemeral(), port_span()
    for _ in range(200):
        port = random.randrange(ports.start, ports.stop - 2 * pairs * span)
        with contextlib.ExitStack() as stack:
            try:
                for k in range(2 * pairs):
                    stack.enter_context(socket.socket()).bind(("127.0.0.1", engine_port(port, k, span)))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no {2 * pairs} adjacent free ports below {ports.stop}")
