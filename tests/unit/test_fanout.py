"""fan_out: every host of the inventory at once, or as many as the site allows (issue 27)."""

from __future__ import annotations

import threading

from kvgate.configuration.inventory.schema import Inventory
from kvgate.transport import fan_out


def test_every_host_runs_at_once_by_default() -> None:
    """64 hosts meet at one barrier: a pool below the host count (the old 16) would never fill it."""
    hosts = {f"h{i}": f"h{i}" for i in range(64)}
    barrier = threading.Barrier(len(hosts), timeout=60)
    assert fan_out(hosts, lambda _h: barrier.wait() >= 0) == dict.fromkeys(hosts, True)


def test_a_site_limit_is_never_exceeded() -> None:
    running, most, lock = 0, 0, threading.Lock()

    def probe(_host: str) -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        threading.Event().wait(0.01)
        with lock:
            running -= 1

    fan_out({f"h{i}": f"h{i}" for i in range(12)}, probe, max_workers=3)
    assert most <= 3


def test_the_inventory_declares_the_limit() -> None:
    inv = Inventory.model_validate(
        {"site": "s", "hosts": {"a": {"address": "127.0.0.1"}}, "max_parallel_hosts": 8}
    )
    assert inv.max_parallel_hosts == 8
