"""G1 arrival: the delivered hardware and software are what was ordered, and healthy.

The catalogue: one test function per family of checks, each parametrized by the plan
(`kvgate.orchestration.g1.plan`: one check per host and item of the inventory's bill of materials).
Facts are collected once per host, concurrently; a host that cannot be reached makes its
own checks ERROR, not the others'. `pytest --collect-only gates/g1_arrival --inventory FILE`
lists every check without touching a host.
"""

import pytest

from kvgate.base.criteria import Judgement
from kvgate.orchestration.g1 import evaluate_facts, plan
from kvgate.orchestration.pytest_plugin import expect, family

pytestmark = pytest.mark.gate("g1")


@family(plan, "G1-CPU-*", "G1-MEM-*", "G1-OS-*", judged_on="facts", judge=evaluate_facts)
def test_servers(verdict: Judgement) -> None:
    """G1-CPU/MEM/OS: CPU model, cores and threads, memory, OS and kernel are the BOM's."""
    expect(verdict)


@family(plan, "G1-NVME-*", judged_on="facts", judge=evaluate_facts)
def test_nvme_drives(verdict: Judgement) -> None:
    """G1-NVME: drive count, model, firmware, capacity, and health (media errors, wear, temperature)."""
    expect(verdict)


@family(plan, "G1-PCIE-*", "G1-NUMA-*", judged_on="facts", judge=evaluate_facts)
def test_pcie_and_numa(verdict: Judgement) -> None:
    """G1-PCIE/NUMA: PCIe links at full width and speed; GPUs, NICs and drives on the NUMA nodes declared."""
    expect(verdict)


@family(plan, "G1-NIC-*", "G1-ROCE-*", judged_on="facts", judge=evaluate_facts)
def test_fabric(verdict: Judgement) -> None:
    """G1-NIC/ROCE: NICs up at line rate and MTU; RoCEv2 lossless settings (PFC, ECN, DSCP, GID)."""
    expect(verdict)


@family(plan, "G1-NVMEOF-*", judged_on="facts", judge=evaluate_facts)
def test_nvme_over_fabrics(verdict: Judgement) -> None:
    """G1-NVMEOF: the array's subsystems connected over the declared transport, every path live (ANA)."""
    expect(verdict)


@family(plan, "G1-VOL-*", judged_on="facts", judge=evaluate_facts)
def test_volumes(verdict: Judgement) -> None:
    """G1-VOL: each volume mounted where declared, its filesystem, size, O_DIRECT and scratch safety."""
    expect(verdict)


@family(plan, "G1-GPU-*", judged_on="facts", judge=evaluate_facts)
def test_accelerators(verdict: Judgement) -> None:
    """G1-GPU: GPU or NPU count, model, memory, driver and partitioning are the BOM's."""
    expect(verdict)


@family(plan, "G1-TUNE-*", "G1-CLOCK-*", "G1-TOOL-*", judged_on="facts", judge=evaluate_facts)
def test_tuning_clock_and_tools(verdict: Judgement) -> None:
    """G1-TUNE/CLOCK/TOOL: host tuning, a synchronized clock, the tools the gates need at their versions."""
    expect(verdict)
