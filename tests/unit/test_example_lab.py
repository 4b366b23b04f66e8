"""inventory/example-lab.yaml describes the seed's platform, and the gates read it so.

MI308X nodes and Ascend nodes on one 100GbE RoCE port each to the NVMe-oF array (the seed:
"RoCEv2、单口 100 GbE 的 NVMe-oF 阵列"); G2's line-rate criterion follows the ports declared.
"""

from __future__ import annotations

from pathlib import Path

from kvgate.configuration.engine_profile import tensor_parallel
from kvgate.configuration.gateconfig import in_memory, load_config
from kvgate.configuration.inventory import load
from kvgate.orchestration.g1.plan import plan
from kvgate.orchestration.g2.nic_counters import nic_plan
from kvgate.orchestration.g2.plan import plan as g2_plan
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.storage import storage_plan

LAB = Path(__file__).resolve().parents[2] / "inventory" / "example-lab.yaml"


def test_one_100gbe_port_per_node_makes_the_line_rate_12_5_gb_per_s() -> None:
    inv = load(LAB).inventory
    assert [inv.line_rate_bytes_per_s(h) for h in ("gpu-1", "gpu-2", "npu-1")] == [12.5e9] * 3
    seqread = next(
        c
        for c in g2_plan(in_memory(inv))
        if c.host == "gpu-1" and c.check == "volume[fx100].fio.seqread-1m.bw"
    )
    assert seqread.criterion.expected == 0.8 * 12.5e9
    assert "line_rate_fraction=0.8 × 12.50 GB/s RDMA line rate" in seqread.criterion.source


def test_g1_covers_the_fabric_the_array_placement_and_the_accelerators() -> None:
    checks = {(c.host, c.check) for c in plan(load_config(LAB))}
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
    assert [(c.host, c.check) for c in nic_plan(load_config(LAB))] == [
        ("gpu-1", "nic[^ens1f0np0$].discards"),
        ("gpu-2", "nic[^ens1f0np0$].discards"),
        ("npu-1", "nic[^enp189s0f0$].discards"),
    ]


def test_g3_runs_each_reference_where_the_seed_ran_it() -> None:
    inv = load(LAB).inventory
    dep = inv.engines["r2r3-480b"]
    assert "480B" in dep.model
    assert [tensor_parallel(dep.engine_args), len(dep.instance_envs)] == [4, 2]  # R3: TP4×2
    assert dep.capacity is not None
    assert tensor_parallel(dep.capacity.engine_args) == 8  # R2's TTFT row: TP8
    assert dep.cold_read is not None  # R1: Qwen2.5-32B on one card
    assert (dep.cold_read.model or "").endswith("Qwen2.5-32B-Instruct")
    assert tensor_parallel(dep.cold_read.placement.engine_args) == 1
    assert dep.cold_read.placement.env == {"HIP_VISIBLE_DEVICES": "0"}
    measurable = {c.check for c in g3_plan(in_memory(inv)) if c.host == "gpu-1" and c.ruled is None}
    assert {"engine[r2r3-480b].ttft-p50-reduction", "engine[r2r3-480b].cold-read-bw-gain"} <= measurable
    r9 = {c.check: c for c in storage_plan(in_memory(inv)) if "service-load" in c.check}
    assert {(c.host, c.spec.candidate, c.spec.baseline, c.ruled) for c in r9.values()} == {
        ("npu-1", "fx100", "nfs", None)
    }
    assert sorted(c.spec.binding.model_load or "" for c in r9.values()) == ["deepseek-32b", "deepseek-70b"]
    assert inv.model_loads["deepseek-32b"].profile == "vllm-ascend"
    assert "ASCEND_RT_VISIBLE_DEVICES" in inv.model_loads["deepseek-70b"].env
