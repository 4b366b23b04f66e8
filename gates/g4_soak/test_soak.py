"""G4 soak: hours of mixed load on the tiered-cache engine, judged on errors, drift, memory and correctness.

One test per (engine host, deployment, check) planned from the inventory and the
gate profile (`kvgate.g4.plan`). The soak runs detached on each engine host and the
controller follows it (`kvgate.g4.soak`); every host soaks at once (`kvgate.g4.fixtures`).
"""

from collections.abc import Callable
from typing import Any

import pytest

from kvgate.g4.plan import G4Check, plan
from kvgate.judge import Inputs, Judgement
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g4")


@pytest.mark.checks(plan=plan)
def test_soak(
    check: G4Check,
    g4_evidence: Inputs,
    record: Callable[[Any, Judgement], Judgement],
) -> None:
    expect(record(check, check.evaluate(g4_evidence)))
