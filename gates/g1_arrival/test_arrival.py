"""G1 arrival: the delivered hardware and software are what was ordered, and healthy.

One test per (host, check) planned from the inventory's bill of materials
(`kvgate.g1.plan`). Facts are collected once per host, concurrently; a host
that cannot be reached makes its own checks ERROR, not the others'.
"""

from collections.abc import Callable

import pytest

from kvgate import g1
from kvgate.facts import HostFacts
from kvgate.judge import Judgement
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g1")


@pytest.mark.checks(plan=g1.plan)
def test_arrival(
    check: g1.PlannedCheck, facts: HostFacts, record: Callable[[g1.PlannedCheck, Judgement], Judgement]
) -> None:
    expect(record(check, g1.evaluate(check, facts)))
