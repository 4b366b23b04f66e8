"""G2 single-node baselines: fio and the storage-level KV-restore, model-load and checkpoint workloads.

One test per (host, volume, check) planned from the inventory (`kvgate.g2.plan`).
Every storage client is measured at once; the numbers become the site baseline
that G3 compares against.
"""

from collections.abc import Callable

import pytest

from kvgate.g2.plan import G2Check, plan
from kvgate.judge import Inputs, Judgement
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g2")


@pytest.mark.checks(plan=plan)
def test_baseline(
    check: G2Check,
    volume_measurements: Inputs,
    record: Callable[[G2Check, Judgement], Judgement],
) -> None:
    expect(record(check, check.evaluate(volume_measurements)))
