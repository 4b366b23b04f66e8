"""Parsers on outputs from the field: other machines, versions and vendors (see recorded/PROVENANCE.md).

Every value asserted here was read off the recorded file by hand. Where a tool prints
something that cannot be true (a negative capacity, a PCI id for a model), the parse
keeps the reason and the G1 check comes out INVALID, never FAIL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kvgate.base.criteria import Verdict
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g1.checks import evaluate_facts
from kvgate.orchestration.g1.plan import plan
from kvgate.probes.facts import Collected, HostFacts
from kvgate.probes.facts.base import ParseError
from kvgate.probes.facts.block import parse_lsblk
from kvgate.probes.facts.cpu import parse_lscpu
from kvgate.probes.facts.gpus import parse_npu_smi, parse_nvidia_smi, parse_rocm_smi
from kvgate.probes.facts.memory import parse_meminfo
from kvgate.probes.facts.mounts import parse_findmnt
from kvgate.probes.facts.nvme import annotate, parse_nvme_list, parse_smart_log

DATA = Path(__file__).parents[1] / "data" / "recorded"
TB = 10**12


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def summary(devs: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(d["name"], d["model"], d["firmware"], d["capacity_bytes"]) for d in devs]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (  # nvme-cli 2.11+: only the nested Subsystems[].Controllers[].Namespaces[] form
            "netdata-v2.11-seagate-firecuda-3x",
            [
                ("nvme0n1", "Seagate FireCuda 530 ZP4000GM30023", "SU6SM005", 4000787030016),
                ("nvme1n1", "Seagate FireCuda 530 ZP4000GM30023", "SU6SM001", 4000787030016),
                ("nvme2n1", "Seagate FireCuda 530 ZP4000GM30023", "SU6SM001", 4000787030016),
            ],
        ),
        (  # the same drives under nvme-cli 2.3: flat Devices[] with DevicePath
            "netdata-v2.3-seagate-firecuda-2x",
            [
                ("nvme0n1", "Seagate FireCuda 530 ZP4000GM30023", "SU6SM001", 4000787030016),
                ("nvme1n1", "Seagate FireCuda 530 ZP4000GM30023", "SU6SM001", 4000787030016),
            ],
        ),
        ("cachelib-samsung-pm983", [("nvme0n1", "SAMSUNG MZ1LB1T9HALS-000FB", "EDA78F2Q", 1880375648256)]),
        ("cachelib-seagate-nytro-xm1441", [("nvme0n1", "XM1441-1AB112048", "PA00FB0C", 1920383410176)]),
        ("cachelib-intel-p3700", [("nvme0n1", "INTEL SSDPEDME016T4F", "8DV1FF05", 1600321314816)]),
        (
            "cachelib-micron-7450-samsung-pm9a3",
            [
                ("nvme0n1", "MTFDHBA512TCK", "P1FB007", 512110190592),
                ("nvme1n1", "MZOL23T8HCLS-00AFB", "GDA82F2Q", 3760740458496),
                ("nvme2n1", "MZOL23T8HCLS-00AFB", "GDA82F2Q", 3760740458496),
            ],
        ),
        ("issue1786-wdc-sn650-nvme-cli-1.16", [("nvme0n1", "WUS6AA138FSP5EA", "LF100010", 3840755982336)]),
        (  # NVMe-oF array, nvme-cli 1.x: two namespaces of one PowerStore subsystem
            "gonvme-1x-powerstore-2ns",
            [("nvme0n1", "dellemc", "2.1.0.0", 5368709120), ("nvme0n2", "dellemc", "2.1.0.0", 5368709120)],
        ),
        (  # nvme-cli 2.11 multipath: the namespace sits on the subsystem, two controllers are its paths
            "gonvme-2.11-powerstore-ana",
            [("nvme0n1", "dellemc-powerstore", "4.1.0.0", 3221225472)],
        ),
        ("gonvme-2.11-powermax", [("nvme0n1", "EMC PowerMax_2500", "60790275", 3222405120)]),
    ],
)
def test_nvme_list_across_versions_and_vendors(name: str, expected: list[tuple[Any, ...]]) -> None:
    devs = parse_nvme_list(recorded(f"nvme/list/{name}.json"))["devices"]
    assert summary(devs) == expected
    assert not any("invalid" in d for d in devs)


def test_nvme_list_nested_form_keeps_serials_and_fabric_transport() -> None:
    local = parse_nvme_list(recorded("nvme/list/netdata-v2.11-seagate-firecuda-3x.json"))["devices"]
    assert [d["serial"] for d in local] == ["XXX02YYY", "XXX00YYY", "7VS00KNX"]
    assert annotate(local, {})["count"] == 3  # the JSON's own "pcie": local drives without the sysfs probe
    (array,) = parse_nvme_list(recorded("nvme/list/gonvme-2.11-powerstore-ana.json"))["devices"]
    assert (array["transport"], array["namespace_id"], array["serial"]) == ("tcp", 293, "883YCJ3")
    assert annotate([array], {})["count"] == 0  # NVMe/TCP: the array's namespace, not a local drive


def test_negative_capacity_is_kept_out_with_its_reason() -> None:
    (dev,) = parse_nvme_list(recorded("nvme/list/issue2028-intel-p4510-8tb-negative-size.json"))["devices"]
    assert (dev["model"], dev["firmware"], dev["capacity_bytes"]) == ("INTEL SSDPE2KX080T8", "VDV10182", None)
    assert dev["invalid"]["capacity_bytes"].startswith(
        "PhysicalSize -2147483648 is negative: nvme-cli 2.2-2.5"
    )


def test_a_size_that_disagrees_with_its_lba_count_is_kept_out() -> None:
    devs = parse_nvme_list(recorded("nvme/list/cachelib-skhynix-3x.json"))["devices"]
    assert [d["capacity_bytes"] for d in devs] == [None, None, None]
    assert devs[0]["invalid"]["capacity_bytes"] == (
        "PhysicalSize 512110190592 != MaximumLBA 500118192 x SectorSize 512: a field overflowed"
    )


def test_smart_log_2_11_object_form() -> None:
    smart = parse_smart_log(recorded("nvme/smart-log/netdata-v2.11-critical-warning-object.json"))
    assert smart["critical_warning"] == 0
    assert smart["temperature_c"] == pytest.approx(50.85)  # 324 K
    assert (smart["percentage_used"], smart["power_on_hours"], smart["error_log_entries"]) == (30, 24424, 212)


def judged(family: str, col: Collected, expect: dict[str, Any]) -> dict[str, tuple[Verdict, str]]:
    """check id -> (verdict, condition) of the G1 plan for one host whose `family` is `col`."""
    inv = Inventory.model_validate(
        {"site": "lab", "hosts": {"gpu-1": {"roles": ["gpu-node"], "expect": expect}}}
    )
    facts = HostFacts(host="gpu-1", families={family: col})
    return {
        c.check: (evaluate_facts(c, facts).verdict, evaluate_facts(c, facts).condition)
        for c in plan(in_memory(inv))
        if c.spec.family == family
    }


def test_a_negative_capacity_makes_the_capacity_check_invalid_not_fail() -> None:
    devs = parse_nvme_list(recorded("nvme/list/issue2028-intel-p4510-8tb-negative-size.json"))["devices"]
    col = Collected(facts=annotate(devs, {"nvme0n1": "pcie"}))
    results = judged("nvme", col, {"nvme": {"count": 1, "model": "SSDPE2KX080T8", "capacity_gb": 8000}})
    verdict, condition = results["nvme.capacity"]
    assert verdict is Verdict.INVALID
    assert condition == (
        "nvme0n1.capacity_gb: PhysicalSize -2147483648 is negative: nvme-cli 2.2-2.5 printed 64-bit sizes "
        "as 32-bit integers (fixed by its commit 87bf24cdffc1)"
    )
    assert results["nvme.count"][0] is Verdict.PASS
    assert results["nvme.model"][0] is Verdict.PASS


@pytest.mark.parametrize(
    ("name", "model", "cores", "threads", "sockets"),
    [
        ("debian12-kvm-epyc", "AMD EPYC", 2, 2, 1),
        ("replay-util-linux-x86_64-epyc_7451", "AMD EPYC 7451 24-Core Processor", 48, 96, 2),
        ("replay-util-linux-x86_64-64cpu", "Intel(R) Xeon(R) CPU           X7550  @ 2.00GHz", 32, 64, 4),
        ("replay-util-linux-vmware_fpe", "AMD Opteron(tm) Processor 6328", 8, 16, 2),
        ("replay-util-linux-ppc64-POWER7", "POWER7 (architected), altivec supported", 4, 16, 4),
        ("replay-util-linux-armv7", "Cortex-A15", 2, 2, 1),
    ],
)
def test_lscpu_single_core_type(name: str, model: str, cores: int, threads: int, sockets: int) -> None:
    cpu = parse_lscpu(recorded(f"lscpu/{name}.json"))
    assert (cpu["model"], cpu["cores"], cpu["threads"], cpu["sockets"]) == (model, cores, threads, sockets)
    assert len(cpu["core_types"]) == 1


def test_lscpu_several_core_types_and_a_placeholder() -> None:
    cpu = parse_lscpu(recorded("lscpu/replay-util-linux-arm-A510-A710-A715-X3.json"))
    assert [(t["model"], t["cores"]) for t in cpu["core_types"]] == [
        ("Cortex-A510", 3),
        ("Cortex-A715", 2),
        ("Cortex-A710", 2),
        (None, 1),  # lscpu prints "Model name: -" for the Cortex-X3 it cannot name
    ]
    assert cpu["model"] == "Cortex-A510 + Cortex-A715 + Cortex-A710 + (unnamed core type)"
    assert (cpu["cores"], cpu["threads"], cpu["vendor"]) == (8, 8, "ARM")


def test_lscpu_placeholders_leave_values_unknown() -> None:
    cpu = parse_lscpu(recorded("lscpu/replay-util-linux-s390-lpar.json"))  # "Model name: -", no Socket(s)
    assert (cpu["model"], cpu["sockets"], cpu["cores"], cpu["threads"]) == (None, None, None, 20)


def test_lsblk_lvm_over_four_devices_is_one_device_with_four_parents() -> None:
    devs = {d["name"]: d for d in parse_lsblk(recorded("lsblk/replay-util-linux-simple-lvm.json"))["devices"]}
    lv = devs["dm-0"]
    assert (lv["type"], lv["size_bytes"], lv["parents"]) == (
        "lvm",
        33554432,
        ["loop0", "loop1", "loop2", "loop3"],
    )
    assert list(devs).count("dm-0") == 1
    assert devs["nvme0n1p2"]["parents"] == ["nvme0n1"]
    assert (devs["sda"]["model"], devs["sda"]["size_bytes"]) == ("KINGSTON SH103S3", 240057409536)


def test_lsblk_nvme_disk_and_partitions() -> None:
    devs = {
        d["name"]: d for d in parse_lsblk(recorded("lsblk/replay-util-linux-simple-nvme.json"))["devices"]
    }
    assert (devs["nvme0n1"]["model"], devs["nvme0n1"]["size_bytes"]) == ("KINGSTON SKC1000240G", 240057409536)
    assert (devs["nvme0n1p2"]["mountpoint"], devs["nvme0n1p2"]["size_bytes"]) == ("/home", 214748364800)


NAVI22 = "Navi 22 [Radeon RX 6700/6700 XT / 6800M]"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "telegraf-mi100_rocm571",
            ("Arcturus GL-XL [Instinct MI100]", "0000:1e:00.0", 34342961152, 6, "6.2.4"),
        ),
        (
            "telegraf-vega-20-WKS-GL-XE",
            ("Radeon Instinct MI50 32GB", "0000:63:00.0", 34342961152, 1, "5.9.17"),
        ),
        ("telegraf-rx6700xt_rocm571", (NAVI22, "0000:07:00.0", 12868124672, 1, "6.3.6")),
        # ROCm 6.1+: "Card Series" and "Device Name"; "Card Model" holds the PCI device id
        ("telegraf-rx6700xt_rocm612", (NAVI22, "0000:07:00.0", 12868124672, 1, "6.3.6")),
    ],
)
def test_rocm_smi_names_across_versions(name: str, expected: tuple[Any, ...]) -> None:
    """expected: first card's model, PCI address, VRAM bytes; the card count; the driver."""
    facts = parse_rocm_smi(recorded(f"rocm-smi/{name}.json"))
    gpu = facts["devices"][0]
    found = (gpu["model"], gpu["pci_address"], gpu["memory_total_bytes"], len(facts["devices"]))
    assert (*found, facts["driver_version"]) == expected


@pytest.mark.parametrize(
    ("name", "ids"),
    [
        ("telegraf-rx6700xt_rocm430", "Card series 0x1002, Card model 0x1002, Card SKU 67XA6S"),
        ("telegraf-vega-10-XT", "Card model 0xc1e, Card SKU D05101"),
    ],
)
def test_rocm_smi_pci_ids_are_never_a_model(name: str, ids: str) -> None:
    (gpu,) = parse_rocm_smi(recorded(f"rocm-smi/{name}.json"))["devices"]
    assert gpu["model"] is None
    assert gpu["invalid"]["model"] == f"rocm-smi printed no product name, only PCI ids or a SKU ({ids})"


def test_rocm_smi_vendor_id_makes_the_model_check_invalid_not_fail() -> None:
    facts = parse_rocm_smi(recorded("rocm-smi/telegraf-rx6700xt_rocm430.json"))
    col = Collected(facts={"devices": facts["devices"], "driver_version": {"amd": facts["driver_version"]}})
    results = judged("gpus", col, {"gpus": {"vendor": "amd", "count": 1, "model": "RX 6700"}})
    assert results["gpu.model"] == (
        Verdict.INVALID,
        "gpu0.model: rocm-smi printed no product name, only PCI ids or a SKU "
        "(Card series 0x1002, Card model 0x1002, Card SKU 67XA6S)",
    )
    assert results["gpu.count"][0] is Verdict.PASS


@pytest.mark.parametrize(
    ("name", "model", "pci", "mib", "driver"),
    [
        ("telegraf-a10g", "NVIDIA A10G", "0000:00:1e.0", 23028, "515.105.01"),
        ("telegraf-tesla-t4", "Tesla T4", "0000:00:1e.0", 15360, "515.105.01"),
        ("telegraf-quadro-p400", "Quadro P400", "0000:43:00.0", 1998, "418.43"),
        ("telegraf-rtx-3080-v13", "NVIDIA GeForce RTX 3080", "0000:0c:00.0", 10240, "595.58.03"),
        (
            "telegraf-rtx-4000-sff-ada-v13",
            "NVIDIA RTX 4000 SFF Ada Generation",
            "0000:06:00.0",
            20475,
            "595.84",
        ),
        ("telegraf-gtx-1070-ti", "GeForce GTX 1070 Ti", "0000:01:00.0", 4096, None),
    ],
)
def test_nvidia_smi_across_driver_versions(
    name: str, model: str, pci: str, mib: int, driver: str | None
) -> None:
    facts = parse_nvidia_smi(recorded(f"nvidia-smi/{name}.xml"))
    (gpu,) = facts["devices"]
    assert (gpu["model"], gpu["pci_address"], gpu["memory_total_bytes"]) == (model, pci, mib * 2**20)
    assert facts["driver_version"] == driver


@pytest.mark.parametrize(
    ("name", "version", "chips"),
    [
        # 310P3 cards carry two chips on one PCI function; memory is DDR, no HBM column
        (
            "nputop-310p3-2chip",
            "24.1.0.1",
            [
                (1, 0, "0000:01:00.0", 44280),
                (1, 1, "0000:01:00.0", 43693),
                (2, 0, "0000:02:00.0", 44280),
                (2, 1, "0000:02:00.0", 43693),
            ],
        ),
        ("nputop-310b4-nohbm", "23.0.0", [(0, 0, None, 15609)]),  # Bus-Id "NA"
        ("nputop-910b3-container", "25.2.3", [(3, 0, "0000:82:00.0", 65536)]),  # one card seen in a container
    ],
)
def test_npu_smi_cards_chips_and_memory(name: str, version: str, chips: list[tuple[Any, ...]]) -> None:
    facts = parse_npu_smi(recorded(f"npu-smi/{name}.txt"))
    assert facts["driver_version"] == version
    assert [
        (n["index"], n["chip"], n["pci_address"], n["memory_total_bytes"] // 2**20) for n in facts["devices"]
    ] == chips


def test_npu_smi_health_is_kept() -> None:
    (npu,) = parse_npu_smi(recorded("npu-smi/nputop-310b4-nohbm.txt"))["devices"]
    assert (npu["model"], npu["health"], npu["temperature_c"]) == ("310B4", "Alarm", 65.0)


@pytest.mark.parametrize(
    ("name", "total_kib", "available_kib", "hugepages"),
    [
        ("telegraf-mem-normal", 16201888, 14221924, 0),
        ("telegraf-mem-missing-fields", 16201888, 14221924, 0),
        ("telegraf-hugepages-valid", 264026876, 260015468, 2048),
    ],
)
def test_meminfo_other_machines(name: str, total_kib: int, available_kib: int, hugepages: int) -> None:
    mem = parse_meminfo(recorded(f"meminfo/{name}.txt"))
    assert (mem["mem_total_bytes"], mem["mem_available_bytes"]) == (total_kib * 1024, available_kib * 1024)
    assert mem["hugepages_total"] == hugepages


@pytest.mark.parametrize(
    ("name", "source", "target", "fstype", "option"),
    [
        ("replay-util-linux-home-on-lvm-ext4", "/dev/mapper/kzak-home", "/home/kzak", "ext4", "noatime"),
        ("replay-util-linux-cifs", "//foo.home/bar/", "/mnt/sounds", "cifs", "rsize=16384"),
        ("replay-util-linux-lsblk-lvm-root", "/dev/sda4", "/", "ext4", "data=ordered"),
        ("replay-telegraf-ext4-discard", "/dev/sdb", "/mnt/storage", "ext4", "discard"),
        ("replay-telegraf-tmpfs", "tmpfs", "/tmp", "tmpfs", "size=16427752k"),
    ],
)
def test_findmnt_other_machines(name: str, source: str, target: str, fstype: str, option: str) -> None:
    mnt = parse_findmnt(recorded(f"findmnt/{name}.json"))
    assert (mnt["source"], mnt["target"], mnt["fstype"]) == (source, target, fstype)
    assert option in mnt["options"]


def test_findmnt_entry_that_is_not_an_object_names_the_tool() -> None:
    with pytest.raises(ParseError, match="findmnt: expected filesystems"):
        parse_findmnt('{"filesystems": [null]}')
