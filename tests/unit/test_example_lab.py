"""inventory/example-lab.yaml describes the seed's platform, and the gates read it so.

MI308X nodes and Ascend nodes on one 100GbE RoCE port each to the NVMe-oF array (the seed:
"RoCEv2、单口 100 GbE 的 NVMe-oF 阵列"); G2's line-rate criterion follows the ports declared.
"""

from __future__ import annotations

from pathlib import Path

from replay import recorded

from kvgate.base.criteria import Criterion, Measurement, Verdict, judge
from kvgate.configuration.engine_profile import tensor_parallel
from kvgate.configuration.gateconfig import in_memory, load_config
from kvgate.configuration.inventory import API_PORT_OFFSET, load, parse_constraint
from kvgate.orchestration.g1.plan import plan
from kvgate.orchestration.g2.nic_counters import nic_plan
from kvgate.orchestration.g2.plan import plan as g2_plan
from kvgate.orchestration.g3.plan import plan as g3_plan
from kvgate.orchestration.g3.storage import storage_pairs, storage_plan
from kvgate.probes.facts.nvme import parse_list_subsys, parse_nvme_list, parse_smart_log

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


def test_no_two_engines_of_a_tp4_deployment_share_a_port() -> None:
    """Before, instances sat 2 ports apart and a recompute engine 1 above the first: at TP4 the second
    instance's LMCache API server (scheduler + 4 workers from port + 10000) took the first's workers'."""
    dep = load(LAB).inventory.engines["r2r3-480b"]
    widest = max(
        tensor_parallel(a) for a in (dep.engine_args, dep.capacity.engine_args if dep.capacity else ())
    )
    assert widest == 8  # the capacity levels' TP8 engine runs in the first instance's slot
    slots = range(2 * len(dep.instance_envs))  # instance i in slot 2i, a recompute engine in 2i + 1
    api = [dep.engine_port(s) + API_PORT_OFFSET for s in slots]  # LMCache's scheduler, then a worker per rank
    opened = [{dep.engine_port(s), *range(a, a + 1 + widest)} for s, a in zip(slots, api, strict=True)]
    assert sum(len(o) for o in opened) == len(set().union(*opened)), "two engines share a port"
    assert dep.engine_port(0) == dep.port


def test_the_nvme_cli_the_example_asks_for_is_the_oldest_the_parsers_read() -> None:
    """Before, `nvme >= 2.0` failed G1 on Ubuntu 22.04's stock nvme-cli 1.16 although the parsers read
    1.x: list-subsys and smart-log as Debian 11's 1.12 prints them (captured), list as 1.16 does."""
    inv = load(LAB).inventory
    tools = [inv.expectations(h).tools for h in inv.hosts]
    floors = [parse_constraint(t["nvme"]).version for t in tools if "nvme" in t]
    assert floors
    assert set(floors) == {"1.12"}
    subsys = parse_list_subsys(recorded("nvme/list-subsys/captured-qemu-nvme-cli-1.12-tcp-3-paths-ana.json"))
    assert subsys["subsystems"], "the 1.12 layout is read"
    assert parse_smart_log(recorded("nvme/smart-log/captured-qemu-nvme-cli-1.12-critical-warning-4.json"))
    assert parse_nvme_list(recorded("nvme/list/issue1786-wdc-sn650-nvme-cli-1.16.json"))["devices"]
    ubuntu_2204 = Criterion("G1", "nvme", "version>=", "1.12")
    assert judge(ubuntu_2204, Measurement("nvme", "nvme version 1.16")).verdict is Verdict.PASS


def test_the_shared_nfs_export_has_room_for_every_hosts_checkpoint() -> None:
    """Before, the NFS volume asked for 512 GiB free, while G3 saves R1's checkpoint (8 × 65.6 GB) on it
    from each engine host at once (hosts are measured together): 977 GiB."""
    config = load_config(LAB)
    inv, storage = config.inventory.inventory, config.g3.storage
    assert storage is not None
    ckpt = config.models[storage.checkpoint].checkpoint
    assert ckpt is not None
    per_save = ckpt.snapshot_bytes * (ckpt.ranks if ckpt.snapshot_per_rank else 1)
    writers = [h for h, cand, base in storage_pairs(inv) if "nfs" in (cand, base)]
    assert writers == ["gpu-1", "gpu-2"]
    need_gib = len(writers) * per_save / 2**30
    assert inv.volumes["nfs"].min_free_gib is not None
    assert inv.volumes["nfs"].min_free_gib >= need_gib, f"{need_gib:.0f} GiB written at once"
