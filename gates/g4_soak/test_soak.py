"""G4 soak: hours of mixed load on the tiered-cache engine, judged on errors, drift, memory and correctness.

The catalogue: one test function per family, parametrized by the plan (`kvgate.orchestration.g4.plan`:
per engine host and deployment). The soak runs detached on each engine host and the
controller follows it (`orchestration.g4.soak`); every host soaks at once (`orchestration.g4.fixtures`).
The limits are the site's (workloads/g4/<scale>.yaml): the seed says only "72 h stable".
"""

import pytest

from kvgate.base.criteria import Judgement
from kvgate.orchestration.g4 import plan
from kvgate.orchestration.pytest_plugin import expect, family

pytestmark = pytest.mark.gate("g4")


@family(plan, "G4-ENG-1", "G4-RUN-1", judged_on="g4_evidence")
def test_soak_ran(verdict: Judgement) -> None:
    """G4-ENG/RUN: a deployment to soak, and windows covering the soak's declared duration."""
    expect(verdict)


@family(plan, "G4-ERR-*", judged_on="g4_evidence")
def test_no_errors(verdict: Judgement) -> None:
    """G4-ERR: no failed requests, no empty answers, no engine died, over the whole soak."""
    expect(verdict)


@family(plan, "G4-KV-1", judged_on="g4_evidence")
def test_no_corruption(verdict: Judgement) -> None:
    """G4-KV-1: every window's canary outputs equal the first window's (or differ at a near-tie)."""
    expect(verdict)


@family(plan, "G4-INT-*", judged_on="g4_evidence")
def test_nothing_was_lost(verdict: Judgement) -> None:
    """G4-INT: what the integrity load wrote beside the engines reads back equal, without an I/O error."""
    expect(verdict)


@family(plan, "G4-DRIFT-*", "G4-MEM-1", "G4-CAP-*", "G4-HIT-1", judged_on="g4_evidence")
def test_no_drift(verdict: Judgement) -> None:
    """G4-DRIFT/MEM/CAP/HIT: TTFT, throughput, memory, tier size and hit ratio hold from start to end."""
    expect(verdict)


@family(plan, "G4-NVME-*", "G4-NIC-*", "G4-PATH-*", "G4-KLOG-*", judged_on="g4_evidence")
def test_devices_and_kernel_stay_healthy(verdict: Judgement) -> None:
    """G4-NVME/NIC/PATH/KLOG: SMART, NIC loss counters and paths hold; the kernel logged no storage fault."""
    expect(verdict)
