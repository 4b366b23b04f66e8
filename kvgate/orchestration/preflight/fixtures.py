"""Preflight fixtures: every host probed at once, its probes in turn."""

from __future__ import annotations

import functools

import pytest

from kvgate.base.criteria import Inputs
from kvgate.base.errors import LabError
from kvgate.orchestration.gatefixtures import GateRun
from kvgate.orchestration.preflight.measure import Found, Probe
from kvgate.orchestration.preflight.plan import PreflightCheck


@pytest.fixture(scope="session")
def preflight_measured(gate_run: GateRun) -> dict[str, Found | LabError]:
    """Every pending host's probes, hosts concurrently."""
    config, exs, session = gate_run.config, gate_run.executors, gate_run.session

    def probe(host: str) -> Found:
        return Probe(
            exs[host], config, host, gate_run.store, functools.partial(session.notify, host), exs
        ).all()

    results = gate_run.fan_out(sorted(session.hosts_pending), probe)
    for host, r in results.items():
        session.notify(host, "probed" if not isinstance(r, LabError) else f"ERROR: {r}")
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
