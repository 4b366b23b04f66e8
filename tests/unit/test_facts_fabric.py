"""The fabric and the array at arrival: RoCEv2 lossless setup and NVMe-oF path quality.

Parsers run on recorded outputs (mlnx_qos, ibv_devinfo, kernel logs: tests/data/recorded,
PROVENANCE.md); the sysfs probes run for real (sh) on a sysfs tree written here; the
G1 checks are judged on facts the real collectors build through Replay.
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
from kvgate.probes.facts import HostContext, HostFacts, collect_host, nvme, nvmeof, roce
from kvgate.probes.facts.base import ParseError
from kvgate.transport.base import quote

# -- parsers on recorded outputs -------------------------------------------------------------


def test_mlnx_qos_on_an_ofed_host_with_dscp_trust_and_pfc_on_priority_3() -> None:
    qos = roce.parse_mlnx_qos(recorded("mlnx_qos/att-netarbiter-ofed-dscp-pfc3.txt"))
    assert qos == {
        "tool": "mlnx_qos",
        "trust": "dscp",
        "pfc": [False, False, False, True, False, False, False, False],
    }


def test_dcb_pfc_as_documented_and_on_a_nic_without_dcb() -> None:
    qos = roce.parse_dcb_pfc(recorded("dcb/documented-man-dcb-pfc-iproute2-6.1.txt"))
    assert [p for p, on in enumerate(qos["pfc"]) if on] == [6, 7]
    assert qos["trust"] is None  # dcb pfc says nothing about trust
    with pytest.raises(ParseError, match="dcb pfc: expected 'prio-pfc"):
        roce.parse_dcb_pfc(recorded("dcb/debian12-kvm-lo-unsupported.txt"))


def test_ibv_devinfo_roce_ports_at_1024_and_an_iwarp_device() -> None:
    mlx4 = roce.parse_ibv_devinfo(recorded("ibv_devinfo/tensorflow-gdr-mlx4-roce-2port.txt"))["devices"]
    assert [(d["name"], d["fw_ver"]) for d in mlx4] == [("mlx4_0", "2.40.7000")]
    assert [(p["port"], p["active_mtu"], p["max_mtu"], p["link_layer"]) for p in mlx4[0]["ports"]] == [
        (1, 1024, 4096, "Ethernet"),
        (2, 1024, 4096, "Ethernet"),
    ]
    siw = roce.parse_ibv_devinfo(recorded("ibv_devinfo/lore-siw-iwarp.txt"))["devices"][0]
    assert (siw["transport"], siw["ports"][0]["active_mtu"], siw["ports"][0]["state"]) == (
        "iWARP (1)",
        1024,
        "PORT_ACTIVE (4)",
    )


def test_ipv4_mapped_gids() -> None:
    assert roce.ipv4_of("0000:0000:0000:0000:0000:ffff:c0a8:d3f2") == "192.168.211.242"
    assert roce.ipv4_of("fe80:0000:0000:0000:0ac0:ebff:fe21:03da") is None


def test_an_operators_nvme_disconnect_is_not_a_controller_lost() -> None:
    """Every deletion logs 'Removing ctrl: NQN'; one given up after ctrl_loss_tmo 'Removing controller...'."""
    log = nvmeof.parse_kernel_log(recorded("kernel-log/lab-vm-nvme-rdma-disconnected.txt"))
    assert (log["source"], log["errors"]) == ("journalctl -k -b", 0)
    lost = nvmeof.parse_kernel_log("[ 9.1] nvme nvme2: Removing controller...\n")
    assert lost["by_kind"] == {"controller lost": 1}


def test_kernel_log_transport_errors_of_an_rdma_and_a_tcp_host() -> None:
    rdma = nvmeof.parse_kernel_log(recorded("kernel-log/lore-nvme-rdma-mlx5-local-protection-error.txt"))
    # RECV for CQE failed, starting error recovery, 10 x no usable path, the target's keep-alive expiry
    assert rdma["by_kind"] == {"transport error": 1, "error recovery": 1, "no path": 10, "timeout": 1}
    tcp = nvmeof.parse_kernel_log(recorded("kernel-log/lore-nvme-tcp-reconnect.txt"))
    assert tcp["by_kind"] == {"error recovery": 1, "timeout": 1, "reconnect failed": 4}
    assert tcp["first"][0] == "nvme nvme17: starting error recovery"
    clean = "".join(recorded("kernel-log/lore-nvme-tcp-reconnect.txt").splitlines(keepends=True)[:6])
    assert nvmeof.parse_kernel_log(clean)["errors"] == 0


def test_kernel_log_lines_of_local_controllers_are_left_out() -> None:
    log = recorded("kernel-log/lore-nvme-tcp-reconnect.txt")
    assert nvmeof.parse_kernel_log(log, local=frozenset({"nvme17"}))["errors"] == 0


def test_an_unreadable_kernel_log_is_an_error_not_a_clean_log() -> None:
    with pytest.raises(ParseError, match="dmesg_restrict"):
        nvmeof.parse_kernel_log("#source none\n")


def test_persistent_connect_configuration_files() -> None:
    conf = nvmeof.parse_discovery_conf(recorded("nvme-config/constructed-discovery.conf"))
    assert conf == [
        {"traddr": "10.230.1.1", "transport": "tcp"},
        {"traddr": "10.230.1.2", "transport": "tcp"},
    ]
    cfg = nvmeof.parse_config_json(recorded("nvme-config/constructed-config.json"))
    assert cfg == [
        {"nqn": "nqn.2024-01.com.example:fx100:kvcache", "traddr": "10.30.0.100", "transport": "rdma"}
    ]
    with pytest.raises(ParseError, match=r"/etc/nvme/config\.json"):
        nvmeof.parse_config_json('{"hosts": 3}')


# -- the sysfs probes, run by sh on a sysfs tree ---------------------------------------------


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def run_probe(probe: str, root: Path) -> str:
    """The probe exactly as the executor sends it, with /sys/ moved under `root`."""
    cmd = quote(probe).replace("/sys/", f"{root}/sys/")
    return subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, check=True).stdout


def roce_tree(root: Path) -> None:
    port = "sys/class/infiniband/mlx5_0/ports/1"
    gids = {
        "0": ("fe80:0000:0000:0000:0ac0:ebff:fe21:03da", "IB/RoCE v1"),
        "1": ("fe80:0000:0000:0000:0ac0:ebff:fe21:03da", "RoCE v2"),
        "2": ("0000:0000:0000:0000:0000:ffff:0a1e:000b", "IB/RoCE v1"),
        "3": ("0000:0000:0000:0000:0000:ffff:0a1e:000b", "RoCE v2"),
        "4": ("0000:0000:0000:0000:0000:0000:0000:0000", ""),
    }
    files = {f"{port}/link_layer": "Ethernet\n"}
    for i, (gid, kind) in gids.items():
        files |= {f"{port}/gids/{i}": gid + "\n", f"{port}/gid_attrs/ndevs/{i}": "ens1f0np0\n"}
        files |= {f"{port}/gid_attrs/types/{i}": kind + "\n"} if kind else {}
    for side in ("roce_np", "roce_rp"):
        files |= {
            f"sys/class/net/ens1f0np0/ecn/{side}/enable/{p}": "1\n" if p == 3 else "0\n" for p in range(8)
        }
    write(root, files)


def test_roce_probe_reads_gids_their_types_and_the_ecn_switches(tmp_path: Path) -> None:
    roce_tree(tmp_path)
    facts = roce.parse_probe(run_probe(roce.PROBE, tmp_path))
    assert facts["ports"] == [
        {"device": "mlx5_0", "port": 1, "link_layer": "Ethernet", "netdev": "ens1f0np0"}
    ]
    assert [(g["index"], g["type"], g["ipv4"]) for g in facts["gids"]] == [
        (0, "IB/RoCE v1", None),
        (1, "RoCE v2", None),
        (2, "IB/RoCE v1", "10.30.0.11"),
        (3, "RoCE v2", "10.30.0.11"),
    ]  # the all-zero GID 4 is an empty slot
    assert facts["ecn"]["ens1f0np0"]["np"]["3"] is True
    assert facts["ecn"]["ens1f0np0"]["rp"]["0"] is False


def test_rdma_cm_probe_reads_configfs_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    roce_tree(tmp_path)
    cfg = tmp_path / "sys/kernel/config/rdma_cm"
    cfg.mkdir(parents=True)
    # no device directory yet: the probe creates it (rdma_cm would fill it), reads, removes it
    assert roce.parse_cm(run_probe(roce.CM_PROBE, tmp_path)) == {"mlx5_0/1": None}
    assert list(cfg.iterdir()) == []
    write(tmp_path, {"sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode": "RoCE v2\n"})
    assert roce.parse_cm(run_probe(roce.CM_PROBE, tmp_path)) == {"mlx5_0/1": "RoCE v2"}
    assert (cfg / "mlx5_0").is_dir()  # a directory the site created stays


def test_nvmeof_probe_reads_controllers_ana_states_and_iopolicy(tmp_path: Path) -> None:
    c = "sys/class/nvme/nvme2"
    write(
        tmp_path,
        {
            "sys/class/nvme/nvme0/transport": "pcie\n",
            "sys/class/nvme/nvme0/queue_count": "65\n",
            f"{c}/transport": "rdma\n",
            f"{c}/address": "traddr=10.30.0.100,trsvcid=4420\n",
            f"{c}/state": "live\n",
            f"{c}/subsysnqn": "nqn.2024-01.com.example:fx100\n",
            f"{c}/ctrl_loss_tmo": "off\n",
            f"{c}/reconnect_delay": "10\n",
            f"{c}/fast_io_fail_tmo": "off\n",
            f"{c}/queue_count": "33\n",
            f"{c}/nvme2c2n1/ana_state": "optimized\n",
            "sys/class/nvme-subsystem/nvme-subsys2/subsysnqn": "nqn.2024-01.com.example:fx100\n",
            "sys/class/nvme-subsystem/nvme-subsys2/iopolicy": "numa\n",
            # the head: the array's volatile write cache (Identify Controller VWC) as the kernel set it
            "sys/class/nvme-subsystem/nvme-subsys2/nvme2n1/queue/write_cache": "write back\n",
            "sys/class/nvme-subsystem/nvme-subsys2/nvme2n1/queue/fua": "1\n",
            "sys/class/nvme-subsystem/nvme-subsys2/nvme2/transport": "rdma\n",  # its controller: no head
        },
    )
    facts = nvmeof.parse_probe(run_probe(nvmeof.PROBE, tmp_path))
    local, fabric = facts["controllers"]
    assert (local["transport"], local["io_queues"], local["ctrl_loss_tmo_s"]) == ("pcie", 64, None)
    assert fabric == {
        "name": "nvme2",
        "transport": "rdma",
        "address": "traddr=10.30.0.100,trsvcid=4420",
        "state": "live",
        "nqn": "nqn.2024-01.com.example:fx100",
        "ctrl_loss_tmo_s": "off",
        "reconnect_delay_s": 10,
        "fast_io_fail_tmo_s": "off",
        "io_queues": 32,
        "paths": [{"namespace": "nvme2c2n1", "ana_state": "optimized"}],
    }
    assert facts["subsystems"] == [
        {
            "name": "nvme-subsys2",
            "nqn": "nqn.2024-01.com.example:fx100",
            "iopolicy": "numa",
            "namespaces": [{"name": "nvme2n1", "write_cache": "write back", "fua": True}],
        }
    ]


# -- G1 checks on the seed's platform: a RoCE port to the array, one NVMe-oF path --------------

CM_V2 = "cm|mlx4_0|1|RoCE v2\ncm|mlx4_0|2|RoCE v2\n"


def ibv_4096() -> str:
    """The recorded mlx4 ports at the 4096 path MTU a 9000-byte netdev MTU gives (changed here)."""
    return recorded("ibv_devinfo/tensorflow-gdr-mlx4-roce-2port.txt").replace("1024 (3)", "4096 (5)")


def lab_answers() -> dict[str, Answer]:
    return {
        quote(roce.PROBE): ok("sysfs-roce/constructed-lab-mlx4-2port.txt"),
        quote(roce.CM_PROBE): (0, CM_V2, ""),
        "ibv_devinfo": (0, ibv_4096(), ""),
        "mlnx_qos -i": ok("mlnx_qos/att-netarbiter-ofed-dscp-pfc3.txt"),
        quote(nvmeof.PROBE): ok("sysfs-nvmeof/constructed-lab-fx100-rdma-1-path.txt"),
        "cat /etc/nvme/discovery.conf": (1, "", "No such file or directory"),
        "cat /etc/nvme/config.json": ok("nvme-config/constructed-config.json"),
        "systemctl is-enabled nvmf-autoconnect.service": (0, "enabled\n", ""),
        nvmeof.KERNEL_LOG: (0, "#source journalctl -k -b\n", ""),
    }


LAB_TOOLS = {"mlnx_qos", "ibv_devinfo", "dcb"}
NIC = {"name": "^ens1$", "speed_mbps": 100000, "mtu": 9000, "driver": "mlx4_en", "rdma": True}
ROCE = {"priority": 3, "trust": "dscp", "addresses": ["10.30.0.11"]}
NVMEOF = {"subsystems": 1, "transport": "rdma", "min_ctrl_loss_tmo_s": 600, "max_fast_io_fail_tmo_s": 30}


def lab_g1(
    replace: dict[str, Answer] | None = None, tools: set[str] = LAB_TOOLS, **expect: Any
) -> dict[str, tuple[Verdict, str]]:
    """check -> (verdict, condition) of the fabric and array checks on the lab host."""
    bom = {"nics": [NIC], "roce": ROCE, "nvmeof": NVMEOF} | expect
    inv = Inventory.model_validate(
        {"site": "lab", "hosts": {HOST: {"expect": bom | {"pcie_full_link": False}}}}
    )
    facts = collect_host(Replay(lab_answers() | (replace or {}), tools), HostContext(HOST, {}, True))
    return {
        c.check: (evaluate_facts(c, facts).verdict, evaluate_facts(c, facts).condition)
        for c in plan(in_memory(inv))
    }


def fabric(results: dict[str, tuple[Verdict, str]]) -> dict[str, tuple[Verdict, str]]:
    """The new checks (subsystem count and live paths read nvme-cli, judged in test_g1_plan)."""
    older = ("nvmeof.subsystems", "nvmeof.live_paths")
    return {k: v for k, v in results.items() if k.startswith(("roce", "nvmeof")) and k not in older}


def test_a_lossless_fabric_and_a_well_connected_array_pass() -> None:
    results = fabric(lab_g1())
    assert {k: v for k, v in results.items() if v[0] is not Verdict.PASS} == {}
    assert len(results) == 11  # six RoCE checks, five NVMe-oF path checks
    assert results["roce[^ens1$].pfc"][1] == "ens1.pfc_prio3=True = True — PFC on priorities [3] (mlnx_qos)"
    assert results["roce[^ens1$].gid"][1].startswith("ens1.roce_v2_gid[10.30.0.11]=True = True — GIDs: [0]")
    assert results["roce[^ens1$].mtu"][1].startswith("ens1.active_mtu=4096 = 4096 — max_mtu 4096")
    assert results["nvmeof.ctrl_loss_tmo"][1] == "nvme2.ctrl_loss_tmo_s=off (never) ≥ 600 s"
    assert results["nvmeof.persistent"][0] is Verdict.PASS


def test_fast_io_fail_off_keeps_io_waiting_through_a_path_loss() -> None:
    sysfs = recorded("sysfs-nvmeof/constructed-lab-fx100-rdma-1-path.txt").replace(
        "|off|5|10|", "|off|5|off|"
    )
    verdict, condition = lab_g1({quote(nvmeof.PROBE): (0, sysfs, "")})["nvmeof.fast_io_fail_tmo"]
    assert verdict is Verdict.FAIL
    assert condition == "nvme2.fast_io_fail_tmo_s=off (never) ≤ 30 s"


def test_pcp_trust_fails_and_a_missing_qos_tool_fails() -> None:
    pcp = recorded("mlnx_qos/att-netarbiter-ofed-dscp-pfc3.txt").replace(
        "trust state: dscp", "trust state: pcp"
    )
    results = lab_g1({"mlnx_qos -i": (0, pcp, "")})
    assert results["roce[^ens1$].trust"] == (Verdict.FAIL, "ens1.trust=pcp = dscp")
    missing = lab_g1(tools={"ibv_devinfo"})
    assert missing["roce[^ens1$].pfc"] == (
        Verdict.FAIL,
        "mlnx_qos not installed on host: cannot verify roce[^ens1$].pfc=True",
    )


def test_pfc_read_with_dcb_where_mlnx_qos_is_absent() -> None:
    results = lab_g1(
        {"dcb pfc show": ok("dcb/documented-man-dcb-pfc-iproute2-6.1.txt")}, tools={"dcb", "ibv_devinfo"}
    )
    verdict, condition = results["roce[^ens1$].pfc"]
    assert (verdict, condition) == (
        Verdict.FAIL,
        "ens1.pfc_prio3=False = True — PFC on priorities [6, 7] (dcb)",
    )
    assert results["roce[^ens1$].trust"][0] is Verdict.INVALID
    assert "mlnx_qos -i ens1 does" in results["roce[^ens1$].trust"][1]


def test_the_recorded_1024_path_mtu_fails_and_an_iwarp_port_is_not_roce() -> None:
    results = lab_g1({"ibv_devinfo": ok("ibv_devinfo/tensorflow-gdr-mlx4-roce-2port.txt")})
    assert results["roce[^ens1$].mtu"][0] is Verdict.FAIL
    assert results["roce[^ens1$].mtu"][1].startswith("ens1.active_mtu=1024 = 4096")


def test_ecn_without_ofed_switches_is_invalid_and_says_where_dcqcn_lives() -> None:
    no_ecn = "".join(
        line
        for line in recorded("sysfs-roce/constructed-lab-mlx4-2port.txt").splitlines(True)
        if "ecn|" not in line
    )
    verdict, condition = lab_g1({quote(roce.PROBE): (0, no_ecn, "")})["roce[^ens1$].ecn"]
    assert verdict is Verdict.INVALID
    assert "ROCE_CC_PRIO_MASK_P1" in condition


def test_only_v1_gids_or_a_v1_cm_mode_fail() -> None:
    v1 = recorded("sysfs-roce/constructed-lab-mlx4-2port.txt").replace("|RoCE v2|", "|IB/RoCE v1|")
    results = lab_g1(
        {
            quote(roce.PROBE): (0, v1, ""),
            quote(roce.CM_PROBE): (0, CM_V2.replace("RoCE v2", "IB/RoCE v1"), ""),
        }
    )
    assert results["roce[^ens1$].gid"][0] is Verdict.FAIL
    assert results["roce[^ens1$].cm_mode"] == (Verdict.FAIL, "ens1.mlx4_0/1.cm_mode=IB/RoCE v1 = RoCE v2")


def test_no_roce_checks_without_a_roce_block_and_skip_without_rdma_nics() -> None:
    assert not any(k.startswith("roce") for k in lab_g1(roce=None))
    plain = {**NIC, "rdma": False}
    assert lab_g1(nics=[plain])["roce"] == (Verdict.SKIP, "roce: not applicable — no BOM NIC has rdma: true")


def test_an_inaccessible_path_and_transport_errors_fail() -> None:
    sysfs = recorded("sysfs-nvmeof/constructed-lab-fx100-rdma-1-path.txt").replace(
        "|optimized", "|inaccessible"
    )
    log = "#source journalctl -k -b\n" + recorded("kernel-log/lore-nvme-rdma-mlx5-local-protection-error.txt")
    results = lab_g1({quote(nvmeof.PROBE): (0, sysfs, ""), nvmeof.KERNEL_LOG: (0, log, "")})
    assert results["nvmeof.ana"][0] is Verdict.FAIL
    assert (
        "optimized_paths=0 ≥ 1 — nvme2 traddr=10.30.0.100,trsvcid=4420: inaccessible"
        in results["nvmeof.ana"][1]
    )
    verdict, condition = results["nvmeof.transport_errors"]
    assert verdict is Verdict.FAIL
    assert condition.startswith(
        "transport_errors=13 ≤ 0 — journalctl -k -b: transport error 1, error recovery 1"
    )


def test_a_connection_that_does_not_come_back_after_a_reboot_fails() -> None:
    results = lab_g1({"systemctl is-enabled nvmf-autoconnect.service": (1, "disabled\n", "")})
    assert results["nvmeof.persistent"][0] is Verdict.FAIL
    assert "nvmf-autoconnect disabled" in results["nvmeof.persistent"][1]
    gone = lab_g1({"cat /etc/nvme/config.json": (1, "", "No such file or directory")})
    assert "in discovery.conf/config.json: False" in gone["nvmeof.persistent"][1]


def array_g1(**nvmeof_expect: Any) -> dict[str, tuple[Verdict, str]]:
    """The recorded PowerStore namespace (nvme-cli 2.11) as the array, over NVMe/TCP."""
    answers = {
        "nvme version": ok("tool-versions/nvme.txt"),
        nvme.TRANSPORT_PROBE: (0, "nvme0n1|tcp\n", ""),
        "nvme list -o json": ok("nvme/list/gonvme-2.11-powerstore-ana.json"),
        "nvme list-subsys -o json": (0, '{"Subsystems": []}', ""),
    }
    expect = {"subsystems": 1, "transport": "tcp", "min_optimized_paths": 0, "persistent": False}
    expect |= {"max_transport_errors": None} | nvmeof_expect
    inv = Inventory.model_validate(
        {"site": "lab", "hosts": {HOST: {"expect": {"nvmeof": expect, "pcie_full_link": False}}}}
    )
    facts = collect_host(Replay(answers, {"nvme"}), HostContext(HOST, {}, True))
    return {
        c.check: (evaluate_facts(c, facts).verdict, evaluate_facts(c, facts).condition)
        for c in plan(in_memory(inv))
    }


def test_a_check_combined_over_paths_keeps_the_evidence_it_was_judged_on() -> None:
    """One judgement over several controllers or namespaces names the outputs behind its parts."""
    inv = Inventory.model_validate({"site": "lab", "hosts": {HOST: {"expect": {"nvmeof": NVMEOF}}}})
    facts = collect_host(Replay(lab_answers(), LAB_TOOLS), HostContext(HOST, {}, True))
    (check,) = [c for c in plan(in_memory(inv)) if c.check == "nvmeof.ctrl_loss_tmo"]
    judged = evaluate_facts(check, facts)
    assert judged.measurement is not None
    assert f"artifacts/{HOST}/nvmeof/sysfs.txt" in judged.measurement.evidence


def test_the_arrays_model_firmware_and_capacity_are_judged_from_the_bom() -> None:
    results = array_g1(model="powerstore", firmware=r"^4\.1", capacity_gb=3)
    assert results["nvmeof.model"] == (Verdict.PASS, "nvme0n1.model=dellemc-powerstore matches /powerstore/")
    assert results["nvmeof.firmware"] == (Verdict.PASS, r"nvme0n1.firmware=4.1.0.0 matches /^4\.1/")
    assert results["nvmeof.capacity"] == (Verdict.PASS, "nvme0n1.capacity_gb=3.221 GB ≥ 3 GB")
    wrong = array_g1(model="FX100", capacity_gb=100)
    assert wrong["nvmeof.model"] == (Verdict.FAIL, "nvme0n1.model=dellemc-powerstore matches /FX100/")
    assert wrong["nvmeof.capacity"][0] is Verdict.FAIL


def test_stored_lab_facts_rejudge_the_same() -> None:
    """Facts go through run.json's JSON and back (kvgate rejudge) without changing a condition."""
    bom = {"nics": [NIC], "roce": ROCE, "nvmeof": NVMEOF, "pcie_full_link": False}
    inv = Inventory.model_validate({"site": "lab", "hosts": {HOST: {"expect": bom}}})
    facts = collect_host(Replay(lab_answers(), LAB_TOOLS), HostContext(HOST, {}, True))
    stored = HostFacts.from_json(json.loads(json.dumps(facts.to_json())))
    for check in plan(in_memory(inv)):
        assert evaluate_facts(check, stored).condition == evaluate_facts(check, facts).condition


def test_each_namespace_needs_its_own_optimized_paths() -> None:
    """The QEMU lab's array (lab/setup/array.sh): namespace 1 optimized on port 1 only, namespace 2
    on port 2 only. Each controller is optimized for one namespace: one optimized path per namespace,
    not two per subsystem."""
    lab = {quote(nvmeof.PROBE): ok("sysfs-nvmeof/lab-vm-tcp-2-paths-2-ana-groups.txt")}
    tcp = {"subsystems": 1, "transport": "tcp", "persistent": False}
    one = lab_g1(lab, nvmeof=tcp | {"min_optimized_paths": 1})["nvmeof.ana"]
    assert one[0] is Verdict.PASS
    assert one[1].startswith("nqn.2026-12.io.kvgate:lab-array.optimized_paths=1 ≥ 1")
    two = lab_g1(lab, nvmeof=tcp | {"min_optimized_paths": 2})["nvmeof.ana"]
    assert two[0] is Verdict.FAIL
    assert "nvme0 traddr=10.99.1.1,trsvcid=4420,src_addr=10.99.1.2: non-optimized/optimized" in two[1]
