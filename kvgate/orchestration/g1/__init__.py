"""G1 arrival: the delivered hardware is what was ordered, and healthy.

    plan.py         one PlannedCheck per (host, item of the inventory's bill of materials)
    checks.py       PlannedCheck, the context a plan reads, and evaluating a check on the facts
    plan_hw.py      servers: CPU, memory, OS, local NVMe, the NVMe-oF array as delivered
    plan_host.py    tools, clock, NICs, volumes
    plan_gpu.py     GPUs (NVIDIA) and PCIe links
    plan_accel.py   AMD (amd-smi, rocm-smi) and Ascend (npu-smi) accelerators
    plan_fabric.py  RoCEv2: PFC, DSCP trust, ECN/DCQCN, GIDs, RDMA CM, active MTU
    plan_nvmeof.py  NVMe-oF path quality: ANA state, I/O policy, timeouts, persistent connects
    plan_numa.py    NUMA placement of NICs and GPUs
    plan_tuning.py  host tuning the engines need: /dev/shm, IOMMU, NUMA balancing, device groups

The facts themselves are collected and parsed in ``kvgate.probes.facts``.
"""

from __future__ import annotations

from kvgate.orchestration.g1.checks import FactsProbe, evaluate_facts
from kvgate.orchestration.g1.plan import manifest, plan, tools_wanted
from kvgate.orchestration.g1.plan_nvmeof import configured, optimized_per_namespace

__all__ = [
    "FactsProbe",
    "configured",
    "evaluate_facts",
    "manifest",
    "optimized_per_namespace",
    "plan",
    "tools_wanted",
]
