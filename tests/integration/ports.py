"""Free loopback ports for the engines the integration tests start."""

from __future__ import annotations

import contextlib
import socket


def free_port_pair(pairs: int = 1) -> int:
    """A port p with p + 1 … p + 2·pairs − 1 free too (instance i: tier p + 2i, recompute p + 2i + 1)."""
    for _ in range(50):
        with contextlib.ExitStack() as stack:
            first = stack.enter_context(socket.socket())
            first.bind(("127.0.0.1", 0))
            port = int(first.getsockname()[1])
            if port + 2 * pairs - 1 > 65535:
                continue
            try:
                for k in range(1, 2 * pairs):
                    stack.enter_context(socket.socket()).bind(("127.0.0.1", port + k))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no {2 * pairs} adjacent free ports")
