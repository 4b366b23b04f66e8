"""Parsers of host-level G1 facts on recorded outputs (see tests/data/recorded/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvgate.probes.facts.base import ParseError
from kvgate.probes.facts.block import parse_lsblk
from kvgate.probes.facts.clock import parse_chronyc_tracking, parse_timedatectl
from kvgate.probes.facts.cpu import parse_lscpu
from kvgate.probes.facts.memory import parse_meminfo
from kvgate.probes.facts.mounts import parse_df, parse_findmnt
from kvgate.probes.facts.nics import parse_nics
from kvgate.probes.facts.osinfo import parse_os_release, parse_uname
from kvgate.probes.facts.pcie import parse_link_speed, parse_pcie_links
from kvgate.probes.facts.rdma import parse_rdma
from kvgate.probes.facts.tools import parse_version

DATA = Path(__file__).parents[1] / "data" / "recorded"


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def test_lscpu_counts_physical_cores_over_all_sockets() -> None:
    cpu = parse_lscpu(recorded("lscpu/debian12-kvm-epyc.json"))
    assert cpu["model"] == "AMD EPYC"
    assert (cpu["sockets"], cpu["cores_per_socket"], cpu["cores"], cpu["threads"]) == (1, 2, 2, 2)
    assert cpu["architecture"] == "x86_64"


def test_lscpu_nested_children_of_util_linux_2_38_are_flattened() -> None:
    text = """{"lscpu": [{"field": "Vendor ID:", "data": "AuthenticAMD", "children": [
        {"field": "Model name:", "data": "AMD EPYC 9654 96-Core Processor", "children": [
            {"field": "Thread(s) per core:", "data": "2"}, {"field": "Core(s) per socket:", "data": "96"},
            {"field": "Socket(s):", "data": "2"}]}]},
        {"field": "CPU(s):", "data": "384"}]}"""
    cpu = parse_lscpu(text)
    assert (cpu["model"], cpu["cores"], cpu["threads"]) == ("AMD EPYC 9654 96-Core Processor", 192, 384)


@pytest.mark.parametrize("text", ["lscpu: invalid option", '{"cpus": []}'])
def test_lscpu_malformed_output_names_the_tool(text: str) -> None:
    with pytest.raises(ParseError, match=r"^lscpu: expected"):
        parse_lscpu(text)


def test_meminfo_converts_kib_to_bytes() -> None:
    mem = parse_meminfo(recorded("meminfo/debian12-kvm.txt"))
    assert mem["mem_total_bytes"] == 24683664 * 1024
    assert mem["hugepage_size_bytes"] == 2 * 1024 * 1024
    assert 0 < mem["mem_available_bytes"] <= mem["mem_total_bytes"]


def test_meminfo_without_memtotal_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="MemTotal"):
        parse_meminfo("cat: /proc/meminfo: No such file or directory")


def test_os_release_and_kernel() -> None:
    os_ = parse_os_release(recorded("os-release/debian12.txt"))
    assert (os_["id"], os_["version_id"], os_["pretty_name"]) == (
        "debian",
        "12",
        "Debian GNU/Linux 12 (bookworm)",
    )
    assert parse_uname(recorded("os-release/uname-r-debian12-kvm.txt")) == {"kernel": "6.18.44-fc-v1147"}
    with pytest.raises(ParseError, match="os-release"):
        parse_os_release("NAME=nothing")


def test_lsblk_sizes_sectors_and_rotation() -> None:
    devs = {d["name"]: d for d in parse_lsblk(recorded("lsblk/debian12-kvm.json"))["devices"]}
    vda = devs["vda"]
    assert vda["size_bytes"] == 274877906944
    assert (vda["logical_sector_bytes"], vda["physical_sector_bytes"], vda["rotational"]) == (512, 4096, True)
    assert vda["mountpoint"] == "/"
    with pytest.raises(ParseError, match="lsblk"):
        parse_lsblk('{"devices": []}')


def test_findmnt_resolves_the_mount_holding_a_path() -> None:
    tmp = parse_findmnt(recorded("findmnt/tmp-on-root-ext4.json"))
    assert (tmp["source"], tmp["target"], tmp["fstype"]) == ("/dev/vda", "/", "ext4")
    assert "relatime" in tmp["options"]
    shm = parse_findmnt(recorded("findmnt/dev-shm-stacked-tmpfs.json"))
    assert (shm["target"], shm["fstype"]) == ("/dev/shm", "tmpfs")
    with pytest.raises(ParseError, match="findmnt"):
        parse_findmnt('{"filesystems": []}')


def test_df_free_bytes_are_what_non_root_can_use() -> None:
    df = parse_df(recorded("df/tmp-on-root-ext4.txt"))
    assert df == {"size_bytes": 270553174016, "used_bytes": 24096260096, "free_bytes": 84848033792}
    with pytest.raises(ParseError, match=r"^df:"):
        parse_df("df: /mnt/x: No such file or directory")


def test_nics_on_this_vm_record_virtual_interfaces_too() -> None:
    nics = {n["name"]: n for n in parse_nics(recorded("sysfs-nics/debian12-kvm.txt"))["interfaces"]}
    eth0 = nics["eth0"]
    assert (eth0["driver"], eth0["mtu"], eth0["operstate"], eth0["virtual"]) == (
        "virtio_net",
        1400,
        "up",
        False,
    )
    assert eth0["speed_mbps"] is None  # virtio reports -1: no speed
    assert eth0["pci_address"] == "0000:00:03.0"
    assert nics["lo"]["virtual"]
    assert nics["ifb0"]["virtual"]


def test_nics_lab_speeds_and_pci_functions() -> None:
    nics = {n["name"]: n for n in parse_nics(recorded("sysfs-nics/constructed-lab-roce.txt"))["interfaces"]}
    assert nics["ens1f0np0"]["speed_mbps"] == 100000
    assert nics["ens1f1np1"]["pci_address"] == "0000:a2:00.1"
    assert nics["eno1"]["driver"] == "igb"
    with pytest.raises(ParseError, match="nic sysfs probe: expected 7"):
        parse_nics("eth0|up|1000\n")


def test_pcie_link_speed_formats() -> None:
    assert parse_link_speed("16.0 GT/s PCIe") == 16.0
    assert parse_link_speed("8 GT/s") == 8.0  # kernels before 5.x
    assert parse_link_speed("Unknown") is None


def test_pcie_detects_a_downgraded_width_and_excuses_an_idle_gpu() -> None:
    facts = parse_pcie_links(recorded("sysfs-pcie/constructed-lab-one-downgraded.txt"))
    assert facts["downgraded"] == ["nvme nvme1 (0000:02:00.0)"]
    links = {lk["name"]: lk for lk in facts["links"]}
    assert links["nvme1"]["downgrade"] == "x2 < x4"
    assert links["0000:c1:00.0"]["downgrade"] is None
    assert links["0000:c1:00.0"]["note"] == "idle GPU link at 2.5 of 32 GT/s"
    assert links["nvme2"]["measured"] is False  # NVMe-oF controller: no PCIe link of its own
    assert facts["measured"] == 5


def test_pcie_on_this_vm_has_nothing_measurable() -> None:
    facts = parse_pcie_links(recorded("sysfs-pcie/debian12-kvm.txt"))
    assert facts["measured"] == 0
    assert facts["links"][0]["name"] == "eth0"


def test_rdma_ports_state_roce_and_netdevs() -> None:
    ports = parse_rdma(recorded("sysfs-rdma/constructed-roce-one-port-down.txt"))["ports"]
    up, down = ports
    assert (up["device"], up["state"], up["roce"], up["rate_gbps"]) == ("mlx5_0", "ACTIVE", True, 100.0)
    assert up["netdevs"] == ["ens1f0np0"]
    assert up["gids"] == 2
    assert (down["state"], down["phys_state"], down["gids"]) == ("DOWN", "Disabled", 0)
    assert parse_rdma(recorded("sysfs-rdma/debian12-kvm-none.txt")) == {"ports": []}


def test_chronyc_tracking_offset_in_ms() -> None:
    clock = parse_chronyc_tracking(recorded("chronyc/atlas-system-agent-aws-tracking.csv"))
    assert clock["offset_ms"] == pytest.approx(0.042)
    assert clock["last_offset_ms"] == pytest.approx(-0.048721)
    assert (clock["reference"], clock["stratum"], clock["synchronised"]) == ("169.254.169.123", 4, True)


def test_chronyc_without_a_daemon_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="chronyc tracking: expected one CSV line of 14 fields"):
        parse_chronyc_tracking(recorded("chronyc/debian12-kvm-no-daemon-stderr.txt"))


def test_timedatectl_reports_sync_but_no_offset() -> None:
    clock = parse_timedatectl(recorded("timedatectl/constructed-show-synced.txt"))
    assert clock["synchronised"] is True
    assert clock["offset_ms"] is None


@pytest.mark.parametrize(
    ("name", "version"),
    [("fio.txt", "3.33"), ("nvme.txt", "2.3"), ("python3.txt", "3.11.7"), ("chronyc.txt", "4.3")],
)
def test_tool_versions(name: str, version: str) -> None:
    assert parse_version(recorded(f"tool-versions/{name}")) == version


def test_tool_version_absent() -> None:
    assert parse_version("usage: tool [options]\n") is None


def test_a_soft_roce_port_names_the_interface_its_gids_are_bound_to() -> None:
    """rdma_rxe has no PCI function (no device/net): G1 once found no RDMA port on the lab's links."""
    (port,) = parse_rdma(recorded("sysfs-rdma/lab-vm-rxe-on-a-lab-link.txt"))["ports"]
    assert (port["device"], port["state"], port["roce"]) == ("rxe1", "ACTIVE", True)
    assert port["netdevs"] == ["enp0s3"]
