"""G3 main gate: the tiered-cache engine on the candidate storage against the references.

One test per (engine host, deployment, check) planned from the inventory and the
gate profile (`kvgate.g3.plan`): write-through, cold proof and correctness of the
SSD restore, then the R1/R2/R3 comparisons of the arms. Then model loading (R9)
and checkpoint (R1), candidate against baseline volume (`kvgate.g3.storage`).
Every host is measured at once (`kvgate.g3.fixtures`).
"""

from collections.abc import Callable
from typing import Any

import pytest

from kvgate.g3.plan import G3Check, plan
from kvgate.g3.storage import StorageCheck, StorageResult, evaluate_storage, storage_plan
from kvgate.judge import Inputs, Judgement
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g3")


@pytest.mark.checks(plan=plan)
def test_engine(
    check: G3Check,
    g3_evidence: Inputs,
    record: Callable[[Any, Judgement], Judgement],
) -> None:
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=storage_plan)
def test_storage(
    check: StorageCheck,
    g3_storage_result: StorageResult | None,
    record: Callable[[Any, Judgement], Judgement],
) -> None:
    expect(record(check, evaluate_storage(check, g3_storage_result)))
