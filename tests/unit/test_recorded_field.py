"""G1 parsers on field outputs added for issue 14 (tests/data/recorded/PROVENANCE.md names each source).

Every value asserted here was read off the recorded file by hand; where kvgate had to
change to read a file right, the test says what main's parser returned instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from replay import ok
from test_facts_accel import host_g1

from kvgate.base.criteria import Verdict
from kvgate.orchestration.g2.nic_counters import SHOWN, judged_counters, parse_ethtool_stats
from kvgate.probes.facts.amd import parse_amd_static, parse_amd_topology
from kvgate.probes.facts.mounts import parse_findmnt
from kvgate.probes.facts.nvme import parse_transports
from kvgate.probes.facts.nvmeof import parse_kernel_log
from kvgate.probes.facts.nvmeof import parse_probe as parse_nvmeof_probe
from kvgate.probes.facts.roce import parse_ibv_devinfo, parse_mlnx_qos

DATA = Path(__file__).parents[1] / "data" / "recorded"
MIB = 1 << 20


def recorded(name: str) -> str:
    return (DATA / name).read_text()


# -- amd-smi ----------------------------------------------------------------------------------


def test_amd_smi_mi210_with_the_inbox_driver_reports_the_kernel_release() -> None:
    """amd-smi printed /proc/version without spaces as the driver; main kept that banner whole."""
    facts = parse_amd_static(recorded("amd-smi/dme-static-gpu-data-mi210-inbox-driver.json"))
    (gpu,) = facts["devices"]
    assert facts["driver_version"] == "6.14.0-24-generic"
    assert (gpu["model"], gpu["memory_total_bytes"], gpu["numa_node"]) == (
        "AMD Instinct MI210",
        65520 * MIB,
        1,
    )
    # this amd-smi printed no bdf and only the VBIOS name ("Mi200 pcie"): unknown, not guessed
    assert (gpu["pci_address"], gpu["firmware"]) == (None, None)
    assert (gpu["compute_partition"], gpu["memory_partition"]) == (None, None)


def test_g1_on_the_recorded_mi210_shows_the_release_and_never_fails_what_amd_smi_left_out() -> None:
    """The G1 GPU checks on this recording: VBIOS version and partitions unreported are INVALID, not FAIL."""
    answers = {
        "amd-smi static --json": ok("amd-smi/dme-static-gpu-data-mi210-inbox-driver.json"),
        "amd-smi topology --json": (0, "[]", ""),
    }
    bom = {"vendor": "amd", "count": 1, "model": "MI210", "driver": ">= 6.8", "min_memory_gib": 60}
    bom |= {"firmware": "^022", "compute_partition": "SPX", "memory_partition": "NPS1"}
    results = host_g1(answers, gpus=bom)
    assert results["gpu.driver"] == (Verdict.PASS, "driver_version=6.14.0-24-generic ≥ 6.8")
    assert results["gpu.memory"][0] is Verdict.PASS
    for check in ("gpu.firmware", "gpu.compute_partition", "gpu.memory_partition"):
        assert results[check][0] is Verdict.INVALID, check


def test_amd_smi_strix_halo_apu_list_form_with_partitions_not_applicable() -> None:
    facts = parse_amd_static(recorded("amd-smi/gkm-static-list-strix-halo-rocm631.json"))
    (gpu,) = facts["devices"]
    assert facts["driver_version"] == "6.17.1-300.fc43.x86_64"
    assert gpu["model"] == "Strix Halo [Radeon Graphics / Radeon 8050S Graphics / Radeon 8060S Graphics]"
    assert (gpu["pci_address"], gpu["memory_total_bytes"], gpu["firmware"]) == (
        "0000:c4:00.0",
        32768 * MIB,
        "023.011.000.039.000001",
    )
    assert (gpu["compute_partition"], gpu["memory_partition"], gpu["partition_id"]) == (None, None, 0)


def test_amd_smi_changelog_topology_two_pcie_gpus_in_both_layouts() -> None:
    """ROCm 6.1's per-peer objects and 6.2's links[] say the same: no XGMI, the PCIe peer link DISABLED."""
    expected = [
        {"gpu": 0, "peer": 1, "type": "PCIE", "status": "DISABLED"},
        {"gpu": 1, "peer": 0, "type": "PCIE", "status": "DISABLED"},
    ]
    for name in ("topology-old-2gpu-pcie", "topology-links-2gpu-pcie"):
        links = parse_amd_topology(recorded(f"amd-smi/documented-amdsmi-changelog-{name}.json"))
        assert links["links"] == expected


# -- ibv_devinfo, mlnx_qos --------------------------------------------------------------------


def ports(text: str) -> list[tuple[Any, ...]]:
    devices = parse_ibv_devinfo(text)["devices"]
    keys = ("port", "state", "max_mtu", "active_mtu", "link_layer")
    return [(d["name"], d["fw_ver"], *(p[k] for k in keys)) for d in devices for p in d["ports"]]


def test_ibv_devinfo_two_connectx3_hcas_on_infiniband_not_roce() -> None:
    """MLNX_OFED's libibverbs ('Device ports:' line): InfiniBand link layer, so never a RoCE port."""
    assert ports(recorded("ibv_devinfo/heioy-books-mlx4-infiniband-2hca.txt")) == [
        ("mlx4_1", "2.42.5000", 1, "PORT_ACTIVE (4)", 4096, 4096, "InfiniBand"),
        ("mlx4_1", "2.42.5000", 2, "PORT_DOWN (1)", 4096, 4096, "InfiniBand"),
        ("mlx4_0", "2.42.5000", 1, "PORT_ACTIVE (4)", 4096, 4096, "InfiniBand"),
        ("mlx4_0", "2.42.5000", 2, "PORT_DOWN (1)", 4096, 4096, "InfiniBand"),
    ]


def test_ibv_devinfo_verbose_output_reads_the_same_port_fields() -> None:
    """`-v` adds capability lists, per-port counters and GIDs between the fields kvgate reads."""
    assert ports(recorded("ibv_devinfo/heioy-books-mlx4-verbose-port2-polling.txt")) == [
        ("mlx4_1", "2.42.5000", 2, "PORT_DOWN (1)", 4096, 4096, "InfiniBand"),
    ]


def test_ibv_devinfo_of_an_old_soft_roce_prints_no_link_layer() -> None:
    """rxe-dev's 2016 libibverbs printed no link_layer line: unknown, not Ethernet by guess."""
    assert ports(recorded("ibv_devinfo/issue-softroce-rxe-dev-46-no-link-layer.txt")) == [
        ("rxe0", "0.0.0", 1, "PORT_ACTIVE (4)", 4096, 1024, None),
    ]


def test_mlnx_qos_ofed_4_2_with_pfc_on_four_priorities_and_collapsed_spacing() -> None:
    facts = parse_mlnx_qos(recorded("mlnx_qos/documented-mellanox-doc-2792-ofed42-pfc-0267.txt"))
    assert facts["trust"] == "dscp"
    assert [p for p, on in enumerate(facts["pfc"]) if on] == [0, 2, 6, 7]


# -- kernel log: NVMe-oF transport errors -----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "by_kind"),
    [
        (  # Longhorn over NVMe/TCP, dmesg -T: admin timeout, ten requeued I/Os, keep-alive lost, reconnect
            "issue-spdk-3339-longhorn-nvme-tcp-no-usable-path",
            {"timeout": 2, "error recovery": 1, "no path": 10, "reconnect failed": 1},
        ),
        (  # the target refuses the socket: five failed attempts, each counted twice by the kernel
            "issue-mayastor-1850-nvme-tcp-connect-refused",
            {"error recovery": 1, "reconnect failed": 10},
        ),
        (  # Talos' `talosctl dmesg` form, with SUBSYSTEM=/DEVICE= continuation lines
            "issue-mayastor-1330-talos-nvme-tcp-admin-timeouts",
            {"timeout": 5, "error recovery": 5},
        ),
    ],
)
def test_kernel_log_transport_errors_of_nvme_tcp_hosts(name: str, by_kind: dict[str, int]) -> None:
    facts = parse_kernel_log(recorded(f"kernel-log/{name}.txt"))
    assert (facts["by_kind"], facts["errors"]) == (by_kind, sum(by_kind.values()))


def test_kernel_log_of_local_pcie_drives_is_not_a_fabric_error() -> None:
    """Two local 800 GB drives dropping off the bus: counted only when not declared local."""
    text = recorded("kernel-log/issue-nvme-cli-151-pcie-drive-removed.txt")
    assert parse_kernel_log(text)["by_kind"] == {"timeout": 2, "controller lost": 2}
    assert parse_kernel_log(text, local=frozenset({"nvme2", "nvme3"}))["errors"] == 0


# -- ethtool -S: i40e, both generations of its PFC counter names ------------------------------


@pytest.mark.parametrize(
    ("name", "xoff", "rx_bytes"),
    [  # RHEL 8.5's i40e names PFC frames port.rx_priority_N_xoff, RHEL 8.8's adds _rx / _tx
        ("i40e-int-tp-rhel85", ("port.rx_priority_3_xoff", "port.tx_priority_3_xoff"), 2005843568778348),
        (
            "i40e-sfp-10g-rhel88",
            ("port.rx_priority_3_xoff_rx", "port.tx_priority_3_xoff_tx"),
            262807800957497,
        ),
    ],
)
def test_ethtool_i40e_counters_are_judged_on_port_rx_dropped(
    name: str, xoff: tuple[str, str], rx_bytes: int
) -> None:
    counters = parse_ethtool_stats(recorded(f"ethtool/go-ethtool-metrics-{name}.txt"))
    assert judged_counters(counters) == ("port.rx_dropped", "rdma:out_of_buffer")
    assert (counters["port.rx_dropped"], counters[xoff[0]], counters["rx_bytes"]) == (0, 0, rx_bytes)
    assert sorted(k for k in counters if SHOWN.search(k) and "priority_3" in k) == sorted(xoff)


def test_ethtool_of_an_igb_port_has_no_judged_counters() -> None:
    """igb (1 GbE) names none of the known drivers' discard counters: G2 cannot judge it (INVALID)."""
    counters = parse_ethtool_stats(recorded("ethtool/go-ethtool-metrics-igb-int-tp.txt"))
    assert (len(counters), counters["tx_dropped"], counters["rx_missed_errors"]) == (115, 7, 0)
    assert judged_counters(counters) is None


# -- findmnt: an NFS baseline volume ----------------------------------------------------------


def test_findmnt_nfs_mount_stacked_over_two_nfs4_mounts_is_the_nfs3_udp_one() -> None:
    """Three mounts of one export on one target: the topmost (last) is the live one, NFSv3 over UDP."""
    mount = parse_findmnt(recorded("findmnt/replay-procfs-nfs-stacked-v4-v3.json"))
    assert (mount["source"], mount["target"], mount["fstype"]) == (
        "192.168.1.1:/srv/test",
        "/mnt/nfs/test",
        "nfs",
    )
    assert {"vers=3", "proto=udp", "hard", "rsize=32768"} <= set(mount["options"])


# -- kvgate's NVMe-oF sysfs probe on real sysfs trees -----------------------------------------


def test_nvmeof_probe_on_a_power_host_with_a_dual_ported_pcie_drive() -> None:
    """libnvme's sysfs dump: the space-padded NQNs are trimmed, no ANA rows (the drive has none)."""
    facts = parse_nvmeof_probe(recorded("sysfs-nvmeof/replay-libnvme-tree-pcie-power-dualport.txt"))
    pm1735a = "nqn.1994-11.com.samsung:nvme:PM1735a:2.5-inch:S6RTNE0R900057"
    assert [(c["name"], c["transport"], c["address"], c["nqn"]) for c in facts["controllers"][1:]] == [
        ("nvme1", "pcie", "052e:78:00.0", pm1735a),
        ("nvme2", "pcie", "058e:78:00.0", pm1735a),
    ]
    assert {(c["io_queues"], c["ctrl_loss_tmo_s"], tuple(c["paths"])) for c in facts["controllers"]} == {
        (64, None, ())
    }
    assert [(s["name"], s["iopolicy"]) for s in facts["subsystems"]] == [
        ("nvme-subsys0", "numa"),
        ("nvme-subsys1", "numa"),
    ]


def test_nvmeof_probe_on_an_apple_silicon_host() -> None:
    """A transport kvgate has no name for (apple-nvme) and a kernel without iopolicy: kept as read."""
    facts = parse_nvmeof_probe(recorded("sysfs-nvmeof/replay-libnvme-tree-apple-nvme.txt"))
    (ctrl,) = facts["controllers"]
    assert (ctrl["transport"], ctrl["address"], ctrl["io_queues"]) == ("apple-nvme", "27bcc0000.nvme", 1)
    assert facts["subsystems"][0]["iopolicy"] is None


def test_nvme_transport_probe_on_util_linux_desktop_dump() -> None:
    """The namespace's controller is found through /sys/block/<ns>/device on a real tree: local PCIe."""
    assert parse_transports(recorded("sysfs-nvme/replay-util-linux-simple-nvme.txt")) == {"nvme0n1": "pcie"}
