"""Preflight: can this lab be measured? Minutes of probes before hours of gates (`kvgate preflight`).

One test per (host, probe) planned from the inventory (`kvgate.preflight.plan`): SSH, sudo,
the agent's Python; each volume's counter sanity probe and NFS cache control; each engine
deployment's start, /metrics counters, tokenizer and one prompt through its tier cycle.
"""

from collections.abc import Callable

import pytest

from kvgate.judge import Inputs, Judgement
from kvgate.preflight.plan import PreflightCheck, plan
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("preflight")


@pytest.mark.checks(plan=plan)
def test_preflight(
    check: PreflightCheck,
    preflight_found: Inputs,
    record: Callable[[PreflightCheck, Judgement], Judgement],
) -> None:
    expect(record(check, check.evaluate(preflight_found)))
