"""Preflight: can this lab be measured? Minutes of probes before hours of gates (`kvgate preflight`).

The catalogue: one test function per family, parametrized by the plan (`kvgate.orchestration.preflight.plan`:
per host, its volumes and the engine deployments it runs).
"""

import pytest

from kvgate.base.criteria import Judgement
from kvgate.orchestration.preflight import plan
from kvgate.orchestration.pytest_plugin import expect, family

pytestmark = pytest.mark.gate("preflight")


@family(plan, "PF-HOST-*", judged_on="preflight_found")
def test_hosts(verdict: Judgement) -> None:
    """PF-HOST: a command runs over the host's transport, sudo works where declared, the agent's Python."""
    expect(verdict)


@family(plan, "PF-VOL-*", judged_on="preflight_found")
def test_volumes(verdict: Judgement) -> None:
    """PF-VOL: the counters that stand for a volume move with its reads; an NFS server cache is handled."""
    expect(verdict)


@family(plan, "PF-ENG-*", judged_on="preflight_found")
def test_engines(verdict: Judgement) -> None:
    """PF-ENG: the engine starts, names its counters, counts tokens, one prompt cycles through its tier."""
    expect(verdict)
