"""G2 on the fabric: no NIC discards or buffer overruns on the storage interfaces while the
baseline ran (kvgate.orchestration.g2.nic_counters); pause frames and CNPs are shown with the verdict."""

import pytest

from kvgate.base.criteria import Judgement
from kvgate.orchestration.g2 import evaluate_nic, nic_plan
from kvgate.orchestration.pytest_plugin import expect, family

pytestmark = pytest.mark.gate("g2")


@family(nic_plan, "G2-NIC-*", judged_on="nic_deltas", judge=evaluate_nic)
def test_nic_counters(verdict: Judgement) -> None:
    """G2-NIC: no discards or buffer overruns on a storage NIC while the baseline ran."""
    expect(verdict)
