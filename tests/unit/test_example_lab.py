"""inventory/example-lab.yaml describes the seed's platform, and the gates read it so.

MI308X nodes and Ascend nodes on one 100GbE RoCE port each to the NVMe-oF array (the seed:
"RoCEv2、单口 100 GbE 的 NVMe-oF 阵列"); G2's line-rate criterion follows the ports declared.
"""

from __future__ import annotations

from pathlib import Path

from kvgate.g1 import plan
from kvgate.g2.nic_counters import nic_plan
from kvgate.g2.plan import line_rate_bytes_per_s
from kvgate.g2.plan import plan as g2_plan
from kvgate.inventory import load

LAB = Path(__file__).resolve().parents[2] / "inventory" / "example-lab.yaml"


def test_one_100gbe_port_per_node_makes_the_line_rate_12_5_gb_per_s() -> None:
    inv = load(LAB).inventory
    assert [line_rate_bytes_per_s(inv, h) for h in ("gpu-1", "gpu-2", "npu-1")] == [12.5e9] * 3
    seqread = next(
        c for c in g2_plan(inv) if c.host == "gpu-1" and c.check == "volume[fx100].fio.seqread-1m.bw"
    )
    assert seqread.criterion.expected == 0.8 * 12.5e9
    assert "line_rate_fraction=0.8 × 12.50 GB/s RDMA line rate" in seqread.criterion.source


def test_g1_covers_the_fabric_the_array_placement_and_the_accelerators() -> None:
    checks = {(c.host, c.check) for c in plan(load(LAB).inventory)}
    for check in (
        "roce[^ens1f0np0$].pfc",
        "roce[^ens1f0np0$].gid",
        "nvmeof.ana",
        "nvmeof.persistent",
        "nvmeof.model",
        "numa.gpu_groups",
        "gpu.compute_partition",
        "gpu.xgmi",
        "tuning.cmdline",
    ):
        assert ("gpu-1", check) in checks
    assert {("npu-1", "gpu.health"), ("npu-1", "roce[^enp189s0f0$].mtu"), ("npu-1", "nvmeof.model")} <= checks
    assert ("npu-1", "numa.gpu_groups") not in checks  # no NUMA block for the Ascend nodes


def test_g2_reads_the_storage_port_counters_of_every_node() -> None:
    assert [(c.host, c.check) for c in nic_plan(load(LAB).inventory)] == [
        ("gpu-1", "nic[^ens1f0np0$].discards"),
        ("gpu-2", "nic[^ens1f0np0$].discards"),
        ("npu-1", "nic[^enp189s0f0$].discards"),
    ]
