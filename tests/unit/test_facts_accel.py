"""Accelerators, NUMA placement and host tuning at arrival.

amd-smi outputs are constructed from amd-smi's own source (no complete public JSON output
was found; PROVENANCE.md); npu-smi outputs are recorded; the NUMA probe runs by sh on a
sysfs tree written here; verdicts are judged on facts the real collectors build (Replay).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from replay import HOST, Answer, Replay, ok, recorded

from kvgate.base.criteria import Verdict
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g1.checks import evaluate_facts
from kvgate.orchestration.g1.plan import plan
from kvgate.orchestration.g1.plan_gpu import cards
from kvgate.probes.facts import HostContext, HostFacts, collect_host, numa, pcie
from kvgate.probes.facts.amd import parse_amd_static, parse_amd_topology
from kvgate.probes.facts.base import ParseError
from kvgate.probes.facts.gpus import parse_npu_smi
from kvgate.transport.base import quote

MIB = 1 << 20
DF_HEADER = "Filesystem 1-blocks Used Available Capacity Mounted on\n"


def test_amd_smi_static_list_form() -> None:
    facts = parse_amd_static(recorded("amd-smi/constructed-static-list-mi300x-8gpu.json"))
    first = facts["devices"][0]
    assert facts["driver_version"] == "6.12.12"
    assert (first["model"], first["pci_address"], first["memory_total_bytes"]) == (
        "MI300X-O",
        "0000:05:00.0",
        196592 * MIB,
    )
    assert (first["compute_partition"], first["memory_partition"], first["firmware"]) == (
        "SPX",
        "NPS1",
        "022.040.003.043.000001",
    )
    assert cards(facts["devices"]) == 8


def test_amd_smi_gpu_data_form_after_python_warnings_in_cpx_mode() -> None:
    """ROCm 6.4+ wraps the list in gpu_data; a CPX card lists eight partitions; IFWI replaces VBIOS."""
    facts = parse_amd_static(recorded("amd-smi/constructed-static-gpu-data-cpx-nps4-warnings.json"))
    devs = facts["devices"]
    assert (len(devs), cards(devs)) == (16, 2)
    assert {(d["compute_partition"], d["memory_partition"]) for d in devs} == {("CPX", "NPS4")}
    assert devs[9]["firmware"] == "022.040.003.043.000001"


def test_amd_smi_text_that_is_not_its_json_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="amd-smi: expected amd-smi static --json"):
        parse_amd_static('{"gpu_data": 3}')
    with pytest.raises(ParseError, match="amd-smi"):
        parse_amd_static(
            "ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status\n"
        )


def test_amd_smi_topology_in_both_layouts() -> None:
    old = parse_amd_topology(recorded("amd-smi/constructed-topology-old-8gpu-xgmi.json"))["links"]
    assert len(old) == 56  # 8 GPUs x 7 peers, self links left out
    assert {x["type"] for x in old} == {"XGMI"}
    new = parse_amd_topology(recorded("amd-smi/constructed-topology-links-2gpu.json"))["links"]
    assert new == [
        {"gpu": 0, "peer": 1, "type": "XGMI", "status": "ENABLED"},
        {"gpu": 1, "peer": 0, "type": "XGMI", "status": "ENABLED"},
    ]


def test_ascend_910_npus_with_two_chips_count_as_devices_or_cards() -> None:
    devs = parse_npu_smi(recorded("npu-smi/nputop-ascend910-2npu-4chip.txt"))["devices"]
    assert (len(devs), cards(devs)) == (4, 2)
    assert [d["memory_total_bytes"] for d in devs] == [65536 * MIB] * 4


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_numa_probe_on_a_sysfs_tree_places_nics_and_accelerators_but_not_a_bmc_vga(tmp_path: Path) -> None:
    pci = "sys/bus/pci/devices"
    write(
        tmp_path,
        {
            "sys/devices/system/node/node0/cpulist": "0-95\n",
            "sys/devices/system/node/node1/cpulist": "96-191\n",
            f"{pci}/0000:41:00.0/numa_node": "0\n",
            f"{pci}/0000:41:00.0/class": "0x020000\n",
            f"{pci}/0000:41:00.0/vendor": "0x15b3\n",
            f"{pci}/0000:85:00.0/numa_node": "1\n",
            f"{pci}/0000:85:00.0/class": "0x120000\n",
            f"{pci}/0000:85:00.0/vendor": "0x1002\n",
            f"{pci}/0000:02:00.0/numa_node": "-1\n",  # the BMC's VGA: class 0x0300, ASPEED
            f"{pci}/0000:02:00.0/class": "0x030000\n",
            f"{pci}/0000:02:00.0/vendor": "0x1a03\n",
        },
    )
    (tmp_path / "sys/class/net/ens1f0np0").mkdir(parents=True)
    (tmp_path / "sys/class/net/ens1f0np0/device").symlink_to(tmp_path / pci / "0000:41:00.0")
    cmd = quote(numa.PROBE).replace("/sys/", f"{tmp_path}/sys/")
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, check=True).stdout
    assert numa.parse_numa(out) == {
        "nodes": 2,
        "nics": [{"name": "ens1f0np0", "pci_address": "0000:41:00.0", "numa_node": 0}],
        "accelerators": [{"pci_address": "0000:85:00.0", "vendor": "amd", "numa_node": 1}],
    }


def test_pcie_probe_counts_an_instinct_display_controller_as_a_gpu(tmp_path: Path) -> None:
    """MI200-series Instinct GPUs are PCI class 0x0380 ('Display controller: … Aldebaran')."""
    dev = "sys/bus/pci/devices/0000:03:00.0"
    link = {
        "current_link_speed": "16.0 GT/s PCIe",
        "current_link_width": "8",
        "max_link_speed": "16.0 GT/s PCIe",
    }
    write(
        tmp_path,
        {f"{dev}/class": "0x038000\n", f"{dev}/max_link_width": "16\n"}
        | {f"{dev}/{k}": v for k, v in link.items()},
    )
    cmd = quote(pcie.PROBE).replace("/sys/", f"{tmp_path}/sys/")
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, check=True).stdout
    (gpu,) = pcie.parse_pcie_links(out)["links"]
    assert (gpu["kind"], gpu["address"], gpu["downgrade"]) == ("gpu", "0000:03:00.0", "x8 < x16")


def test_no_numa_affinity_is_node_0_on_one_node_and_unknown_on_two() -> None:
    one = numa.parse_numa("nodes|1\nnet|eth0|0000:00:03.0|-1\n")
    two = numa.parse_numa("nodes|2\nnet|eth0|0000:00:03.0|-1\n")
    assert (one["nics"][0]["numa_node"], two["nics"][0]["numa_node"]) == (0, None)


# -- G1 verdicts on an MI300X-class host with one storage port --------------------------------


def gpu_answers() -> dict[str, Answer]:
    return {
        "amd-smi static --json": ok("amd-smi/constructed-static-list-mi300x-8gpu.json"),
        "amd-smi topology --json": ok("amd-smi/constructed-topology-old-8gpu-xgmi.json"),
        quote(numa.PROBE): ok("sysfs-numa/constructed-lab-2node-8gpu.txt"),
        "df -P -B1 /dev/shm": (0, DF_HEADER + "tmpfs 1082331758592 0 1082331758592 0% /dev/shm\n", ""),
        "cat /proc/cmdline": (
            0,
            "BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=UUID=0b8e ro iommu=pt pci=realloc=off\n",
            "",
        ),
        "cat /proc/sys/kernel/numa_balancing": (0, "0\n", ""),
        "id -un; id -nG": (0, "kvgate\nkvgate video render\n", ""),
    }


GPUS = {"vendor": "amd", "count": 8, "model": "MI300X", "driver": ">= 6.8", "min_memory_gib": 190}
GPUS |= {"firmware": r"^022\.040", "compute_partition": "SPX", "memory_partition": "NPS1", "xgmi": True}
TUNING = {
    "min_shm_gib": 512,
    "kernel_cmdline": ["iommu=pt"],
    "numa_balancing": False,
    "user_groups": ["video", "render"],
}
TP4X2 = [{"HIP_VISIBLE_DEVICES": "0,1,2,3"}, {"HIP_VISIBLE_DEVICES": "4,5,6,7"}]


def inventory(expect: dict[str, Any], instances: list[dict[str, str]]) -> Inventory:
    return Inventory.model_validate(
        {
            "site": "lab",
            "hosts": {HOST: {"roles": ["engine", "storage-client"], "expect": expect}},
            "volumes": {"fx100": {"path": "/mnt/fx100", "kind": "candidate", "scratch": True}},
            "engines": {
                "lmcache": {
                    "tier_profile": "vllm-lmcache",
                    "recompute_profile": "vllm-recompute",
                    "volume": "fx100",
                    "instances": instances,
                }
            },
        }
    )


def host_g1(
    replace: dict[str, Answer] | None = None,
    tools: frozenset[str] = frozenset({"amd-smi"}),
    instances: list[dict[str, str]] | None = None,
    **expect: Any,
) -> dict[str, tuple[Verdict, str]]:
    nic = {"name": "^ens1$", "rdma": True}
    bom = {
        "gpus": GPUS,
        "nics": [nic],
        "numa": {"nodes": 2},
        "tuning": TUNING,
        "pcie_full_link": False,
    } | expect
    inv = inventory(bom, instances or TP4X2)
    facts = collect_host(Replay(gpu_answers() | (replace or {}), set(tools)), HostContext(HOST, {}, True))
    wanted = ("gpu", "numa", "tuning")
    return {
        c.check: (evaluate_facts(c, facts).verdict, evaluate_facts(c, facts).condition)
        for c in plan(in_memory(inv))
        if c.check.startswith(wanted)
    }


def test_the_amd_host_as_ordered_passes_except_the_far_gpu_group() -> None:
    results = host_g1()
    failed = {k: v for k, v in results.items() if v[0] is not Verdict.PASS}
    assert list(failed) == ["numa.gpu_groups"]
    assert failed["numa.gpu_groups"] == (
        Verdict.FAIL,
        "remote_gpu_groups=1 ≤ 0 — storage NICs on node 0; lmcache#0: GPUs [0, 1, 2, 3] on node 0; "
        "lmcache#1: GPUs [4, 5, 6, 7] on node 1 (remote)",
    )
    assert results["gpu.memory"][1].startswith("gpu0.memory_gib=192 GiB ≥ 190 GiB")
    assert results["gpu.xgmi"][1] == "gpu_pairs_without_xgmi=0 = 0 — 8 GPUs, every pair linked by XGMI"
    assert results["tuning.groups"][1].startswith(
        "user_groups[video]=True = True; user_groups[render]=True = True"
    )


def test_a_single_storage_port_may_declare_its_far_gpu_group() -> None:
    assert host_g1(numa={"nodes": 2, "max_remote_gpu_groups": 1})["numa.gpu_groups"][0] is Verdict.PASS


def test_a_pcie_pair_between_two_gpus_fails_xgmi() -> None:
    topo = recorded("amd-smi/constructed-topology-old-8gpu-xgmi.json").replace(
        '"gpu_7": "XGMI"', '"gpu_7": "PCIE"', 1
    )
    results = host_g1({"amd-smi topology --json": (0, topo, "")})
    assert results["gpu.xgmi"] == (Verdict.FAIL, "gpu_pairs_without_xgmi=1 = 0 — gpu0-gpu7: PCIE ENABLED")


def test_cpx_partitions_and_missing_tuning_fail() -> None:
    replace = {
        "amd-smi static --json": ok("amd-smi/constructed-static-gpu-data-cpx-nps4-warnings.json"),
        "cat /proc/cmdline": (0, "BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=UUID=0b8e ro\n", ""),
        "cat /proc/sys/kernel/numa_balancing": (0, "1\n", ""),
        "id -un; id -nG": (0, "kvgate\nkvgate video\n", ""),
    }
    results = host_g1(replace, gpus=GPUS | {"count": 2, "count_unit": "cards", "xgmi": False})
    assert results["gpu.count"] == (Verdict.PASS, "gpu_card_count=2 = 2 — 16 devices on 2 cards")
    assert results["gpu.compute_partition"][0] is Verdict.FAIL
    assert results["gpu.compute_partition"][1].startswith("gpu0.compute_partition=CPX = SPX")
    assert results["gpu.memory_partition"][1].startswith("gpu0.memory_partition=NPS4 = NPS1")
    assert results["tuning.cmdline"] == (
        Verdict.FAIL,
        "cmdline[iommu=pt]=False = True — BOOT_IMAGE=/vmlinuz-5.15.0-119-generic root=UUID=0b8e ro",
    )
    assert results["tuning.numa_balancing"] == (Verdict.FAIL, "numa_balancing=1 = 0")
    assert results["tuning.groups"][0] is Verdict.FAIL


def test_rocm_smi_fallback_counts_gpus_but_cannot_show_partitions() -> None:
    rocm = {"rocm-smi ": ok("rocm-smi/telegraf-mi100-rocm602.json")}
    results = host_g1(
        rocm, tools=frozenset({"rocm-smi"}), gpus={"vendor": "amd", "count": 4, "compute_partition": "SPX"}
    )
    assert results["gpu.count"][0] is Verdict.PASS
    assert results["gpu.compute_partition"] == (
        Verdict.INVALID,
        "compute_partition: compute_partition is reported by amd-smi only; this host answered with rocm-smi",
    )


def test_neither_amd_smi_nor_rocm_smi_installed_fails() -> None:
    results = host_g1(tools=frozenset())
    assert results["gpu.count"] == (
        Verdict.FAIL,
        "amd-smi or rocm-smi not installed on host: cannot verify gpu.count=8",
    )


def test_ascend_chip_health_and_hbm() -> None:
    answers = {"npu-smi info": ok("npu-smi/nputop-310b4-nohbm.txt")}
    gpus = {"vendor": "ascend", "count": 1, "min_memory_gib": 32}
    results = host_g1(answers, tools=frozenset({"npu-smi"}), gpus=gpus, numa=None, tuning=None)
    assert results["gpu.health"] == (Verdict.FAIL, "gpu0.chip0.health=Alarm = OK")
    assert results["gpu.memory"][0] is Verdict.FAIL
    ok910 = {"npu-smi info": ok("npu-smi/nputop-ascend910-2npu-4chip.txt")}
    cards910 = {"vendor": "ascend", "count": 2, "count_unit": "cards", "min_memory_gib": 64}
    results = host_g1(ok910, tools=frozenset({"npu-smi"}), gpus=cards910, numa=None, tuning=None)
    assert {k: v[0] for k, v in results.items()} == {
        "gpu.count": Verdict.PASS,
        "gpu.memory": Verdict.PASS,
        "gpu.health": Verdict.PASS,
    }


def test_gpu_groups_by_uuid_cannot_be_placed() -> None:
    verdict, condition = host_g1(instances=[{"ROCR_VISIBLE_DEVICES": "GPU-afff74a1"}])["numa.gpu_groups"]
    assert verdict is Verdict.INVALID
    assert "do not map onto the 8 accelerators in PCI order" in condition


def test_stored_accelerator_facts_rejudge_the_same() -> None:
    inv = inventory(
        {"gpus": GPUS, "nics": [{"name": "^ens1$", "rdma": True}], "numa": {"nodes": 2}, "tuning": TUNING},
        TP4X2,
    )
    facts = collect_host(Replay(gpu_answers(), {"amd-smi"}), HostContext(HOST, {}, True))
    stored = HostFacts.from_json(json.loads(json.dumps(facts.to_json())))
    for check in plan(in_memory(inv)):
        assert evaluate_facts(check, stored).condition == evaluate_facts(check, facts).condition
