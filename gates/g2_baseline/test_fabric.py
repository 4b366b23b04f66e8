"""G2 on the fabric: no NIC discards or buffer overruns on the storage interfaces while the
baseline ran (kvgate.g2.nic_counters); pause frames and CNPs are shown with the verdict."""

from collections.abc import Callable

import pytest

from kvgate.g2.nic_counters import NicCheck, evaluate_nic, nic_plan
from kvgate.judge import Judgement
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g2")


@pytest.mark.checks(plan=nic_plan)
def test_nic_counters(
    check: NicCheck, nic_deltas: dict[str, dict[str, int]], record: Callable[[NicCheck, Judgement], Judgement]
) -> None:
    expect(record(check, evaluate_nic(check, nic_deltas)))
