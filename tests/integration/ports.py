"""Free loopback ports for the engines the integration tests start."""

from __future__ import annotations

import socket


def free_port_pair() -> int:
    """A port p with p + 1 free too (the tier engine on p, the recompute engine on p + 1)."""
    for _ in range(50):
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", 0))
            port = int(a.getsockname()[1])
            try:
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        if port < 65534:
            return port
    raise RuntimeError("no two adjacent free ports")
