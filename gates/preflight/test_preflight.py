"""Preflight: can this lab be measured? Minutes of probes before hours of gates (`kvgate preflight`).

The catalogue: one test function per family, parametrized by the plan (`kvgate.preflight.plan`:
per host, its volumes and the engine deployments it runs).
"""

from collections.abc import Callable

import pytest

from kvgate.judge import Inputs, Judgement
from kvgate.judgement.catalogue import family
from kvgate.preflight.plan import PreflightCheck, plan
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("preflight")
Record = Callable[[PreflightCheck, Judgement], Judgement]


@pytest.mark.checks(plan=family(plan, "PF-HOST-*"))
def test_hosts(check: PreflightCheck, preflight_found: Inputs, record: Record) -> None:
    """PF-HOST: a command runs over the host's transport, sudo works where declared, the agent's Python."""
    expect(record(check, check.evaluate(preflight_found)))


@pytest.mark.checks(plan=family(plan, "PF-VOL-*"))
def test_volumes(check: PreflightCheck, preflight_found: Inputs, record: Record) -> None:
    """PF-VOL: the counters that stand for a volume move with its reads; an NFS server cache is handled."""
    expect(record(check, check.evaluate(preflight_found)))


@pytest.mark.checks(plan=family(plan, "PF-ENG-*"))
def test_engines(check: PreflightCheck, preflight_found: Inputs, record: Record) -> None:
    """PF-ENG: the engine starts, names its counters, counts tokens, one prompt cycles through its tier."""
    expect(record(check, check.evaluate(preflight_found)))
