"""G2 single-node baselines: fio and the storage-level KV-restore, model-load and checkpoint workloads.

The catalogue: one test function per family, parametrized by the plan (`kvgate.g2.plan`:
per host and scratch volume). Every storage client is measured at once; the numbers become
the site baseline that G3 compares against. A metric without a site threshold is still
judged (> 0, trusted) so it can serve as that baseline.
"""

from collections.abc import Callable

import pytest

from kvgate.g2.plan import G2Check, plan
from kvgate.judge import Inputs, Judgement
from kvgate.judgement.catalogue import family
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g2")
Record = Callable[[G2Check, Judgement], Judgement]


@pytest.mark.checks(plan=family(plan, "G2-FIO-1", "G2-FIO-2", "G2-FIO-3", "G2-FIO-4"))
def test_fio_baseline(check: G2Check, volume_measurements: Inputs, record: Record) -> None:
    """G2-FIO-1..4: sequential read and write bandwidth, 4k random read IOPS and p99 latency per volume."""
    expect(record(check, check.evaluate(volume_measurements)))


@pytest.mark.checks(plan=family(plan, "G2-FIO-5", "G2-FIO-6", "G2-FIO-8"))
def test_fio_stability_and_ceiling(check: G2Check, volume_measurements: Inputs, record: Record) -> None:
    """G2-FIO-5/6/8: repeats agree (CV), the jobs × depth knee, the device's read ceiling G3 is held to."""
    expect(record(check, check.evaluate(volume_measurements)))


@pytest.mark.checks(plan=family(plan, "G2-FIO-7"))
def test_cluster_aggregate(check: G2Check, volume_measurements: Inputs, record: Record) -> None:
    """G2-FIO-7: every client reading a shared volume at once (fio client/server): the aggregate."""
    expect(record(check, check.evaluate(volume_measurements)))


@pytest.mark.checks(plan=family(plan, "G2-KV-*"))
def test_kv_restore(check: G2Check, volume_measurements: Inputs, record: Record) -> None:
    """G2-KV: KV-cache chunks restored cold, parallel and serial, every chunk's checksum intact."""
    expect(record(check, check.evaluate(volume_measurements)))


@pytest.mark.checks(plan=family(plan, "G2-ML-*", "G2-CK-*"))
def test_model_load_and_checkpoint(check: G2Check, volume_measurements: Inputs, record: Record) -> None:
    """G2-ML/CK: model weights loaded cold and a checkpoint written, both verified byte for byte."""
    expect(record(check, check.evaluate(volume_measurements)))
