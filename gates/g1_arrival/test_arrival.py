"""G1 arrival: the delivered hardware and software are what was ordered, and healthy.

The catalogue: one test function per family of checks, each parametrized by the plan
(`kvgate.g1.plan`: one check per host and item of the inventory's bill of materials).
Facts are collected once per host, concurrently; a host that cannot be reached makes its
own checks ERROR, not the others'. `pytest --collect-only gates/g1_arrival --inventory FILE`
lists every check without touching a host.
"""

from collections.abc import Callable

import pytest

from kvgate import g1
from kvgate.facts import HostFacts
from kvgate.judge import Judgement
from kvgate.judgement.catalogue import family
from kvgate.pytest_plugin import expect

pytestmark = pytest.mark.gate("g1")
Record = Callable[[g1.PlannedCheck, Judgement], Judgement]


def judged(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    expect(record(check, g1.evaluate(check, facts)))


@pytest.mark.checks(plan=family(g1.plan, "G1-CPU-*", "G1-MEM-*", "G1-OS-*"))
def test_servers(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-CPU/MEM/OS: CPU model, cores and threads, memory, OS and kernel are the BOM's."""
    judged(check, facts, record)


@pytest.mark.checks(plan=family(g1.plan, "G1-NVME-*"))
def test_nvme_drives(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-NVME: drive count, model, firmware, capacity, and health (media errors, wear, temperature)."""
    judged(check, facts, record)


@pytest.mark.checks(plan=family(g1.plan, "G1-PCIE-*", "G1-NUMA-*"))
def test_pcie_and_numa(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-PCIE/NUMA: PCIe links at full width and speed; GPUs, NICs and drives on the NUMA nodes declared."""
    judged(check, facts, record)


@pytest.mark.checks(plan=family(g1.plan, "G1-NIC-*", "G1-ROCE-*"))
def test_fabric(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-NIC/ROCE: NICs up at line rate and MTU; RoCEv2 lossless settings (PFC, ECN, DSCP, GID)."""
    judged(check, facts, record)


@pytest.mark.checks(plan=family(g1.plan, "G1-NVMEOF-*"))
def test_nvme_over_fabrics(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-NVMEOF: the array's subsystems connected over the declared transport, every path live (ANA)."""
    judged(check, facts, record)


@pytest.mark.checks(plan=family(g1.plan, "G1-VOL-*"))
def test_volumes(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-VOL: each volume mounted where declared, its filesystem, size, O_DIRECT and scratch safety."""
    judged(check, facts, record)


@pytest.mark.checks(plan=family(g1.plan, "G1-GPU-*"))
def test_accelerators(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-GPU: GPU or NPU count, model, memory, driver and partitioning are the BOM's."""
    judged(check, facts, record)


@pytest.mark.checks(plan=family(g1.plan, "G1-TUNE-*", "G1-CLOCK-*", "G1-TOOL-*"))
def test_tuning_clock_and_tools(check: g1.PlannedCheck, facts: HostFacts, record: Record) -> None:
    """G1-TUNE/CLOCK/TOOL: host tuning, a synchronized clock, the tools the gates need at their versions."""
    judged(check, facts, record)
