"""G3 main gate: the tiered-cache engine on the candidate storage against the references.

The catalogue: one test function per family, parametrized by the plan (`kvgate.g3.plan`,
`kvgate.g3.storage`: per engine host and deployment, per candidate volume). First the
site's own evidence that the SSD restore is real, then the seed's figures (R1, R2, R3, R9)
each judged on the arms it was measured on. Every host is measured at once
(`kvgate.g3.fixtures`); a check that cannot be measured here is SKIP or INVALID, never PASS.
"""

from collections.abc import Callable
from typing import Any

import pytest

from kvgate.g3.plan import G3Check, plan
from kvgate.g3.storage import StorageCheck, StorageResult, evaluate_storage, storage_plan
from kvgate.judge import Inputs, Judgement
from kvgate.judgement.catalogue import family
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g3")
Record = Callable[[Any, Judgement], Judgement]


@pytest.mark.checks(plan=family(plan, "G3-ENG-1"))
def test_deployments(check: G3Check, g3_evidence: Inputs, record: Record) -> None:
    """G3-ENG-1: the inventory declares an engine deployment on a host (else the gate is INVALID)."""
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=family(plan, "G3-KV-1"))
def test_write_through(check: G3Check, g3_evidence: Inputs, record: Record) -> None:
    """G3-KV-1: the tier wrote each prompt's KV state through to the SSD (cache growth / predicted bytes)."""
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=family(plan, "G3-KV-2"))
def test_cold_proof(check: G3Check, g3_evidence: Inputs, record: Record) -> None:
    """G3-KV-2: the restore was served cold from the SSD (device and engine read counters), else INVALID."""
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=family(plan, "G3-KV-3", "G3-KV-4"))
def test_correctness_and_hits(check: G3Check, g3_evidence: Inputs, record: Record) -> None:
    """G3-KV-3/4: restored outputs equal recompute's (or differ at a near-tie); under load the cache hits."""
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=family(plan, "R1-cold-read-*"))
def test_r1_cold_read(check: G3Check, g3_evidence: Inputs, record: Record) -> None:
    """R1: on one card, a parallel tier reader restores cold faster than a serial one (TTFT, bandwidth)."""
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=family(plan, "R2-recompute-*"))
def test_r2_restore_vs_recompute(check: G3Check, g3_evidence: Inputs, record: Record) -> None:
    """R2: at concurrency 16, restoring from the SSD beats recomputing without external storage (8.6–20×)."""
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=family(plan, "R2-ttft-*", "R2R3-*", "R3-*"))
def test_r2_r3_capacity(check: G3Check, g3_evidence: Inputs, record: Record) -> None:
    """R2/R3: the SSD tier against DRAM-only on a reuse workload: TTFT and throughput gains, whole machine."""
    expect(record(check, check.evaluate(g3_evidence)))


@pytest.mark.checks(plan=family(storage_plan, "R9-*"))
def test_r9_service_load(
    check: StorageCheck, g3_storage_result: StorageResult | None, record: Record
) -> None:
    """R9: the engine started cold from the candidate volume is ready sooner than from the baseline (NFS)."""
    expect(record(check, evaluate_storage(check, g3_storage_result)))


@pytest.mark.checks(plan=family(storage_plan, "R1-checkpoint-*"))
def test_r1_checkpoint(check: StorageCheck, g3_storage_result: StorageResult | None, record: Record) -> None:
    """R1: a multi-rank checkpoint saves faster on the candidate volume than on the baseline."""
    expect(record(check, evaluate_storage(check, g3_storage_result)))
