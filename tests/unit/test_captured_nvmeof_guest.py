"""Real nvme-cli and kvgate probes on a real NVMe-oF target and host (issue 14, h-rec3).

Captured in a QEMU guest running Debian 12's kernel 6.1.0-57 (tests/data/recorded/captured-qemu/,
PROVENANCE.md): the kernel's own target (nvmet) serves one subsystem over NVMe/TCP on three ports
whose ANA states are optimized / non-optimized / inaccessible, and one over NVMe/RDMA on Soft-RoCE
(rdma_rxe on a veth pair) on two ports, optimized / non-optimized; the host connects with nvme-cli
2.3 (Debian 12), 2.13 (Debian 13) and 1.12 (Debian 11). Two QEMU NVMe drives are the local disks;
the second reports SMART critical warning 0x04 (reliability degraded) through QEMU's
`smart_critical_warning`.
Emulated hardware, real tools: the formats and kernel paths are real, the drive's warning injected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay import ok
from test_g1_plan import run_g1, scratch  # noqa: F401 (scratch is a fixture run_g1 needs)

from kvgate.base.criteria import Verdict
from kvgate.configuration.inventory import Expectations
from kvgate.orchestration.capture import expectations
from kvgate.probes.facts import HostFacts, nvmeof
from kvgate.probes.facts.base import Collected
from kvgate.probes.facts.nvme import annotate, parse_list_subsys, parse_nvme_list, parse_smart_log
from kvgate.probes.facts.nvmeof import parse_kernel_log
from kvgate.probes.facts.nvmeof import parse_probe as parse_nvmeof_probe
from kvgate.probes.facts.roce import parse_cm, parse_ibv_devinfo
from kvgate.probes.facts.roce import parse_probe as parse_roce_probe
from kvgate.transport.base import quote

DATA = Path(__file__).parents[1] / "data" / "recorded"
TCP_NQN = "nqn.2026-12.io.kvgate.h-rec3:tcp-array"
RDMA_NQN = "nqn.2026-12.io.kvgate.h-rec3:rdma-array"
NVMEOF_PROBE = "sysfs-nvmeof/captured-qemu-2-pcie-3-tcp-2-rdma-ana.txt"
SMART_WARNING = "nvme/smart-log/captured-qemu-nvme-cli-2.3-critical-warning-4.json"


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def paths(name: str) -> list[tuple[Any, ...]]:
    (subsys,) = parse_list_subsys(recorded(f"nvme/list-subsys/{name}"))["subsystems"]
    return [(subsys["nqn"], p["name"], p["transport"], p["state"], p["ana_state"]) for p in subsys["paths"]]


def test_list_subsys_of_a_namespace_shows_each_paths_ana_state_over_tcp() -> None:
    """nvme-cli 1.12 (Debian 11) prints the same fields, spaced ` : `, the address space-separated."""
    for version in ("2.3", "1.12"):
        assert paths(f"captured-qemu-nvme-cli-{version}-tcp-3-paths-ana.json") == [
            (TCP_NQN, "nvme2", "tcp", "live", "optimized"),
            (TCP_NQN, "nvme3", "tcp", "live", "non-optimized"),
            (TCP_NQN, "nvme4", "tcp", "live", "inaccessible"),
        ], version


def test_nvme_cli_2_13_prints_the_same_layout_over_rdma() -> None:
    assert paths("captured-qemu-nvme-cli-2.13-rdma-2-paths-ana.json") == [
        (RDMA_NQN, "nvme5", "rdma", "live", "optimized"),
        (RDMA_NQN, "nvme6", "rdma", "live", "non-optimized"),
    ]


def test_list_subsys_without_a_namespace_prints_no_ana_state() -> None:
    """What kvgate's collector runs: every subsystem, paths live, no ANAState (the probe reads it)."""
    subsystems = parse_list_subsys(
        recorded("nvme/list-subsys/captured-qemu-nvme-cli-2.3-all-subsystems-no-ana.json")
    )
    by_nqn = {s["nqn"]: s["paths"] for s in subsystems["subsystems"]}
    assert sorted(by_nqn) == [
        "nqn.2019-08.org.qemu:KVGATEQEMU0",
        "nqn.2019-08.org.qemu:KVGATEQEMU1",
        RDMA_NQN,
        TCP_NQN,
    ]
    assert [(p["transport"], p["ana_state"]) for p in by_nqn[RDMA_NQN]] == [("rdma", None), ("rdma", None)]
    assert {p["state"] for ps in by_nqn.values() for p in ps} == {"live"}


def test_smart_log_of_a_drive_reporting_reliability_degraded() -> None:
    """2.3 prints the 128-bit counters as strings, 2.13 -v the warning as an object, 1.12 plain numbers."""
    for name in (
        SMART_WARNING,
        "nvme/smart-log/captured-qemu-nvme-cli-2.13-verbose-critical-warning-4.json",
        "nvme/smart-log/captured-qemu-nvme-cli-1.12-critical-warning-4.json",
    ):
        smart = parse_smart_log(recorded(name))
        assert (smart["critical_warning"], smart["temperature_c"], smart["media_errors"]) == (4, 49.85, 0), (
            name
        )
    healthy = parse_smart_log(recorded("nvme/smart-log/captured-qemu-nvme-cli-2.13-healthy.json"))
    assert (healthy["critical_warning"], healthy["available_spare_pct"]) == (0, 0)  # QEMU reports spare 0


def test_g1_fails_the_drive_that_reports_a_critical_warning(scratch: tuple[Path, str]) -> None:  # noqa: F811
    results = run_g1(scratch, replace={"nvme smart-log /dev/nvme1n1": ok(SMART_WARNING)})
    verdict, condition = results["nvme.critical_warning"]
    assert verdict is Verdict.FAIL
    assert "nvme1n1.critical_warning=4" in condition


def test_nvme_cli_2_13_lists_namespaces_flat_again() -> None:
    """2.11 printed only the nested form; 2.13 without -v prints the flat Devices[] of 2.10 again."""
    devices = parse_nvme_list(recorded("nvme/list/captured-qemu-nvme-cli-2.13-flat-pcie-tcp-rdma.json"))[
        "devices"
    ]
    assert [(d["name"], d["model"], d["capacity_bytes"], d["transport"]) for d in devices] == [
        ("nvme0n1", "QEMU NVMe Ctrl", 268435456, None),
        ("nvme1n1", "QEMU NVMe Ctrl", 268435456, None),
        ("nvme2n1", "Linux", 1073741824, None),
        ("nvme5n1", "Linux", 1073741824, None),
    ]


def test_verbose_nested_list_marks_the_array_namespaces_by_their_controllers_transport() -> None:
    """The nested form (2.11's default; -v in 2.3 and 2.13): multipath heads in Subsystems[].Namespaces[]."""
    text = recorded("nvme/list/captured-qemu-nvme-cli-2.13-verbose-nested-multipath.json")
    devices = parse_nvme_list(text)["devices"]
    assert [(d["name"], d["transport"]) for d in devices] == [
        ("nvme0n1", "pcie"),
        ("nvme1n1", "pcie"),
        ("nvme2n1", "tcp"),
        ("nvme5n1", "rdma"),
    ]
    assert annotate(devices, {})["count"] == 2  # the two QEMU drives; the array's namespaces are not local


def test_nvmeof_probe_on_a_host_with_tcp_and_rdma_paths_in_three_ana_states() -> None:
    ctrls = {c["name"]: c for c in parse_nvmeof_probe(recorded(NVMEOF_PROBE))["controllers"]}
    fabric = {
        n: (c["transport"], [p["ana_state"] for p in c["paths"]]) for n, c in ctrls.items() if c["paths"]
    }
    assert fabric == {
        "nvme2": ("tcp", ["optimized"]),
        "nvme3": ("tcp", ["non-optimized"]),
        "nvme4": ("tcp", ["inaccessible"]),
        "nvme5": ("rdma", ["optimized"]),
        "nvme6": ("rdma", ["non-optimized"]),
    }
    # Linux 6.1's defaults for a connect without options: 600 s loss timeout, 10 s delay, no fast fail
    nvme5 = ctrls["nvme5"]
    assert (nvme5["ctrl_loss_tmo_s"], nvme5["reconnect_delay_s"], nvme5["fast_io_fail_tmo_s"]) == (
        600,
        10,
        "off",
    )
    assert (nvme5["address"], nvme5["io_queues"]) == ("traddr=10.30.0.12,trsvcid=4420", 2)
    assert (ctrls["nvme0"]["transport"], ctrls["nvme0"]["ctrl_loss_tmo_s"]) == ("pcie", None)


def test_g1_counts_optimized_paths_per_array_subsystem(scratch: tuple[Path, str]) -> None:  # noqa: F811
    replace = {
        "nvme list-subsys -o json": ok(
            "nvme/list-subsys/captured-qemu-nvme-cli-2.3-all-subsystems-no-ana.json"
        ),
        quote(nvmeof.PROBE): ok(NVMEOF_PROBE),
    }
    expect = {"subsystems": 1, "transport": "rdma", "min_live_paths": 2, "min_optimized_paths": 2}
    results = run_g1(scratch, replace=replace, nvmeof=expect)
    assert results["nvmeof.live_paths"][0] is Verdict.PASS
    verdict, condition = results["nvmeof.ana"]
    assert verdict is Verdict.FAIL  # one of the two RDMA paths is non-optimized
    assert f"{RDMA_NQN}.optimized_paths=1" in condition


def test_roce_probe_on_soft_roce_shows_roce_v2_gids_of_the_storage_addresses() -> None:
    probe = parse_roce_probe(recorded("sysfs-roce/captured-qemu-rxe-2-veth.txt"))
    assert [(p["device"], p["link_layer"], p["netdev"]) for p in probe["ports"]] == [
        ("rxe0", "Ethernet", "veth0"),
        ("rxe1", "Ethernet", "veth1"),
    ]
    v4 = [(g["device"], g["index"], g["type"], g["ipv4"]) for g in probe["gids"] if g["ipv4"]]
    assert v4 == [("rxe0", 1, "RoCE v2", "10.30.0.11"), ("rxe1", 1, "RoCE v2", "10.30.0.12")]
    assert probe["ecn"] == {}  # rxe has no MLNX_OFED ecn/roce_np|roce_rp switches
    assert parse_cm(recorded("rdma_cm/captured-qemu-rxe.txt")) == {"rxe0/1": "RoCE v2", "rxe1/1": "RoCE v2"}


AFTER_LOSS = {
    "nvme list-subsys -o json": ok(
        "nvme/list-subsys/captured-qemu-nvme-cli-2.3-all-rdma-path-connecting.json"
    ),
    quote(nvmeof.PROBE): ok("sysfs-nvmeof/captured-qemu-rdma-optimized-path-lost-connecting.txt"),
    nvmeof.KERNEL_LOG: ok("kernel-log/captured-qemu-nvme-rdma-target-port-removed.txt"),
}
ONE_OPTIMIZED_OF_TWO = {"subsystems": 1, "transport": "rdma", "min_live_paths": 2, "min_optimized_paths": 1}


def test_a_path_whose_target_port_went_away_is_connecting_with_its_last_ana_state() -> None:
    """nvme-cli itself prints the stale `ANAState` of a controller that is reconnecting."""
    assert paths("captured-qemu-nvme-cli-2.3-rdma-connecting-stale-optimized.json") == [
        (RDMA_NQN, "nvme5", "rdma", "connecting", "optimized"),
        (RDMA_NQN, "nvme6", "rdma", "live", "non-optimized"),
    ]


def test_g1_after_the_array_dropped_the_optimized_rdma_path(scratch: tuple[Path, str]) -> None:  # noqa: F811
    """The target stopped exporting on port 4; the host retried every 10 s (captured 30 s later)."""
    results = run_g1(scratch, replace=AFTER_LOSS, nvmeof=ONE_OPTIMIZED_OF_TWO)
    verdict, condition = results["nvmeof.live_paths"]
    assert verdict is Verdict.FAIL
    assert f"{RDMA_NQN}.live_paths=1" in condition
    verdict, condition = results["nvmeof.transport_errors"]
    assert verdict is Verdict.FAIL
    assert "error recovery 1, reconnect failed 9" in condition


def test_g1_does_not_count_the_stale_optimized_state_of_a_reconnecting_path(
    scratch: tuple[Path, str],  # noqa: F811
) -> None:
    """Before, the reconnecting controller's last ANA state (``optimized``) passed G1-NVMEOF-3."""
    results = run_g1(scratch, replace=AFTER_LOSS, nvmeof=ONE_OPTIMIZED_OF_TWO)
    verdict, condition = results["nvmeof.ana"]
    assert verdict is Verdict.FAIL  # no live optimized path is left
    assert "optimized (connecting)" in condition


def test_ibv_devinfo_soft_roce_ports_follow_the_netdev_mtu_to_4096() -> None:
    for name, active in (("mtu1500", 1024), ("mtu9000-active-4096", 4096)):
        devices = parse_ibv_devinfo(recorded(f"ibv_devinfo/captured-qemu-rxe-veth-{name}.txt"))["devices"]
        assert [
            (d["name"], p["state"], p["link_layer"], p["max_mtu"], p["active_mtu"])
            for d in devices
            for p in d["ports"]
        ] == [
            ("rxe0", "PORT_ACTIVE (4)", "Ethernet", 4096, active),
            ("rxe1", "PORT_ACTIVE (4)", "Ethernet", 4096, active),
        ], name


def test_kernel_log_of_nvme_rdma_reconnecting_to_a_removed_target_port() -> None:
    log = parse_kernel_log(recorded("kernel-log/captured-qemu-nvme-rdma-target-port-removed.txt"))
    assert (log["source"], log["errors"], log["by_kind"]) == (
        "dmesg",
        10,
        {"error recovery": 1, "reconnect failed": 9},
    )
    assert log["first"][0].endswith("nvme nvme5: starting error recovery")


def test_capture_writes_the_array_as_the_host_reaches_it_not_its_local_drives() -> None:
    """`kvgate inventory capture` on the lab's array guest once wrote `nvmeof: subsystems: 3`: its
    own three PCIe drives, each its own NVMe subsystem, counted as arrays it connects to."""
    subsystems = parse_list_subsys(
        recorded("nvme/list-subsys/captured-qemu-nvme-cli-2.3-all-subsystems-no-ana.json")
    )
    pcie = [s for s in subsystems["subsystems"] if s["nqn"].startswith("nqn.2019-08.org.qemu")]
    tcp = [s for s in subsystems["subsystems"] if s["nqn"] == TCP_NQN]
    fabric = nvmeof.parse_probe(recorded(NVMEOF_PROBE)) | {
        "persistent": {"discovery_conf": [], "autoconnect": None}
    }

    def captured(subs: list[dict[str, Any]]) -> dict[str, Any] | None:
        families = {"nvme": Collected({"subsystems": subs}), "nvmeof": Collected(fabric)}
        return expectations(HostFacts("h", families)).get("nvmeof")

    assert captured(pcie) == {"subsystems": 0}
    assert captured(pcie + tcp) == {
        "subsystems": 1,
        "transport": "tcp",
        "min_live_paths": 3,
        "min_optimized_paths": 1,  # of the three ports' ANA states, one is optimized
        "iopolicy": "numa",
        "min_ctrl_loss_tmo_s": 600,  # nvme-cli's defaults, as connected
        "max_reconnect_delay_s": 10,
        "persistent": False,
    }
    assert captured(subsystems["subsystems"]) is None  # two fabrics: the BOM names one, a person chooses
    assert Expectations.model_validate({"nvmeof": captured(pcie + tcp)}).nvmeof.transport == "tcp"  # type: ignore[union-attr]
