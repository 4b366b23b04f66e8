"""Preflight fixtures: every host probed at once, its probes in turn."""

from __future__ import annotations

import functools

import pytest

from kvgate.errors import LabError
from kvgate.inventory import LoadedInventory
from kvgate.judge import Inputs
from kvgate.preflight.measure import Found, Probe
from kvgate.preflight.plan import PreflightCheck
from kvgate.session import GateSession
from kvgate.store import RunStore
from kvgate.transport import Executor
from kvgate.transport.fanout import fan_out


@pytest.fixture(scope="session")
def preflight_measured(
    inventory: LoadedInventory, executors: dict[str, Executor], run_store: RunStore, gate_session: GateSession
) -> dict[str, Found | LabError]:
    """Every pending host's probes, hosts concurrently."""
    inv = inventory.inventory

    def probe(host: str) -> Found:
        return Probe(
            executors[host], inv, host, run_store, functools.partial(gate_session.notify, host), executors
        ).all()

    results = fan_out({h: h for h in sorted(gate_session.hosts_pending)}, probe)
    for host, r in results.items():
        gate_session.notify(host, "probed" if not isinstance(r, LabError) else f"ERROR: {r}")
    return results


@pytest.fixture
def preflight_found(check: PreflightCheck, preflight_measured: dict[str, Found | LabError]) -> Inputs:
    """The check's measurement; a host that could not be reached, or a failed probe, makes it ERROR."""
    host = preflight_measured[check.host]
    if isinstance(host, LabError):
        raise LabError(f"{check.host}: not probed: {host}") from host
    found = host.get(check.check)
    if isinstance(found, LabError):
        raise found
    return Inputs({check.check: found} if found is not None else {})
