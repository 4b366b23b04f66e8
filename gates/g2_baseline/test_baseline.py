"""G2 single-node baselines: fio and the storage-level KV-restore, model-load and checkpoint workloads.

The catalogue: one test function per family, parametrized by the plan (`kvgate.orchestration.g2.plan`:
per host and scratch volume). Every storage client is measured at once; the numbers become
the site baseline that G3 compares against. A metric without a site threshold is still
judged (> 0, trusted) so it can serve as that baseline.
"""

import pytest

from kvgate.base.criteria import Judgement
from kvgate.orchestration.g2 import plan
from kvgate.orchestration.pytest_plugin import expect, family

pytestmark = pytest.mark.gate("g2")


@family(plan, "G2-FIO-1", "G2-FIO-2", "G2-FIO-3", "G2-FIO-4", judged_on="volume_measurements")
def test_fio_baseline(verdict: Judgement) -> None:
    """G2-FIO-1..4: sequential read and write bandwidth, 4k random read IOPS and p99 latency per volume."""
    expect(verdict)


@family(plan, "G2-FIO-5", "G2-FIO-6", "G2-FIO-8", judged_on="volume_measurements")
def test_fio_stability_and_ceiling(verdict: Judgement) -> None:
    """G2-FIO-5/6/8: repeats agree (CV), the jobs × depth knee, the device's read ceiling G3 is held to."""
    expect(verdict)


@family(plan, "G2-FIO-7", judged_on="volume_measurements")
def test_cluster_aggregate(verdict: Judgement) -> None:
    """G2-FIO-7: every client reading a shared volume at once (fio client/server): the aggregate."""
    expect(verdict)


@family(plan, "G2-KV-*", judged_on="volume_measurements")
def test_kv_restore(verdict: Judgement) -> None:
    """G2-KV: KV-cache chunks restored cold, parallel and serial, every chunk's checksum intact."""
    expect(verdict)


@family(plan, "G2-ML-*", "G2-CK-*", judged_on="volume_measurements")
def test_model_load_and_checkpoint(verdict: Judgement) -> None:
    """G2-ML/CK: model weights loaded cold and a checkpoint written, both verified byte for byte."""
    expect(verdict)
