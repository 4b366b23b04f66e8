"""Parsers of NVMe and GPU/accelerator tools on outputs recorded from real machines."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvgate.probes.facts.base import ParseError
from kvgate.probes.facts.gpus import parse_npu_smi, parse_nvidia_smi, parse_rocm_smi
from kvgate.probes.facts.nvme import (
    annotate,
    parse_list_subsys,
    parse_nvme_list,
    parse_smart_log,
    parse_transports,
)

DATA = Path(__file__).parents[1] / "data" / "recorded"


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def test_nvme_list_models_firmware_and_capacity_in_bytes() -> None:
    devs = parse_nvme_list(recorded("nvme/list/cachelib-wdc-sn720-samsung-pm983a.json"))["devices"]
    assert [d["name"] for d in devs] == ["nvme0n1", "nvme1n1", "nvme2n1"]
    wdc, pm983a = devs[0], devs[1]
    assert (wdc["model"], wdc["capacity_bytes"], wdc["sector_bytes"]) == (
        "WDC CL SN720 SDAQNTW-512G-1020",
        512110190592,
        512,
    )
    assert (pm983a["model"], pm983a["firmware"], pm983a["serial"]) == (
        "MZ1LB960HBJR-000FB",
        "EDW73F2Q",
        "S5XBNE0N300490",
    )
    assert pm983a["capacity_bytes"] == 500107862016


def test_nvme_list_cloud_devices() -> None:
    devs = parse_nvme_list(recorded("nvme/list/mozsearch-aws-ec2-instance-store-ebs.json"))["devices"]
    assert devs[0]["model"] == "Amazon EC2 NVMe Instance Storage"
    assert devs[1]["capacity_bytes"] == 8 * 1024**3


def test_nvme_list_empty_and_malformed() -> None:
    assert parse_nvme_list("No NVMe devices detected.\n") == {"devices": []}
    assert parse_nvme_list('{"Devices": [{"HostNQN": "nqn.x", "Subsystems": []}]}') == {"devices": []}
    with pytest.raises(
        ParseError, match=r"nvme list \(nvme version 2.3\): expected Devices\[\] entries with DevicePath"
    ):
        parse_nvme_list('{"Devices": [{"NSID": 1}]}', version="nvme version 2.3")
    with pytest.raises(ParseError, match="nvme list: expected"):
        parse_nvme_list(recorded("nvme/list/debian12-kvm-no-nvme-stderr.txt"))


@pytest.mark.parametrize(
    "name", ["netdata-nvme-smart-log", "netdata-nvme-smart-log-string", "netdata-nvme-smart-log-float"]
)
def test_smart_log_kelvin_becomes_celsius_whatever_the_json_number_type(name: str) -> None:
    smart = parse_smart_log(recorded(f"nvme/smart-log/{name}.json"))
    assert smart["temperature_c"] == pytest.approx(36.85)  # 310 K
    assert (smart["critical_warning"], smart["media_errors"], smart["percentage_used"]) == (0, 0, 2)
    assert (smart["power_on_hours"], smart["unsafe_shutdowns"], smart["error_log_entries"]) == (4974, 39, 110)
    assert smart["available_spare_pct"] == 100


def test_smart_log_human_readable_critical_warning_object() -> None:
    text = recorded("nvme/smart-log/netdata-nvme-smart-log.json").replace(
        '"critical_warning": 0', '"critical_warning": {"value": 4, "reliability_degraded": 1}'
    )
    assert parse_smart_log(text)["critical_warning"] == 4


def test_smart_log_without_health_fields_names_them() -> None:
    with pytest.raises(ParseError, match="nvme smart-log: expected a JSON object with critical_warning"):
        parse_smart_log('{"temperature": 310}')


def test_list_subsys_nvme_cli_1x_split_paths() -> None:
    subs = parse_list_subsys(recorded("nvme/list-subsys/nvme-cli-doc-rdma-multipath.json"))["subsystems"]
    assert [s["nqn"] for s in subs] == ["nvmf-test", "nvmf-test2"]
    assert [p["name"] for p in subs[0]["paths"]] == ["nvme0", "nvme1"]
    assert {p["transport"] for s in subs for p in s["paths"]} == {"rdma"}
    assert subs[0]["paths"][0]["state"] is None  # 1.x prints no path state


def test_list_subsys_inline_paths_with_states() -> None:
    (sub,) = parse_list_subsys(recorded("nvme/list-subsys/gonvme-session-info-valid.json"))["subsystems"]
    assert [(p["name"], p["state"]) for p in sub["paths"]] == [("nvme0", "live"), ("nvme1", "deleting")]


def test_list_subsys_2x_array_of_hosts() -> None:
    (sub,) = parse_list_subsys(recorded("nvme/list-subsys/gonvme-2x-array-form.json"))["subsystems"]
    assert sub["name"] == "nvme-subsys0"
    assert [p["state"] for p in sub["paths"]] == ["live", "live"]
    with pytest.raises(ParseError, match="nvme list-subsys: expected a subsystem"):
        parse_list_subsys('{"Subsystems": [{"Paths": []}]}')
    with pytest.raises(ParseError, match="nvme list-subsys: expected nvme list-subsys -o json output"):
        parse_list_subsys('[{"HostNQN"')


def test_local_drives_are_told_apart_from_fabric_namespaces() -> None:
    devs = parse_nvme_list(recorded("nvme/list/cachelib-wdc-sn720-samsung-pm983a.json"))["devices"]
    facts = annotate(devs, parse_transports(recorded("sysfs-nvme/constructed-2-local-1-rdma.txt")))
    assert facts["count"] == 2
    assert [d["local"] for d in facts["devices"]] == [True, True, False]


def test_nvidia_smi_xml_gpu_model_memory_and_link() -> None:
    facts = parse_nvidia_smi(recorded("nvidia-smi/telegraf-a100-sxm4-80gb-v12.xml"))
    assert (facts["driver_version"], facts["cuda_version"]) == ("535.54.03", "12.2")
    (gpu,) = facts["devices"]
    assert gpu["model"] == "NVIDIA A100-SXM4-80GB"
    assert gpu["pci_address"] == "0000:01:00.0"
    assert gpu["memory_total_bytes"] == 81920 * 1024**2
    assert (gpu["temperature_c"], gpu["pcie_gen_current"], gpu["pcie_width_max"]) == (27.0, 4.0, 16.0)


def test_nvidia_smi_error_text_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="nvidia-smi: expected nvidia-smi -q -x XML"):
        parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")


def test_rocm_smi_cards_in_order_with_vram_bytes() -> None:
    facts = parse_rocm_smi(recorded("rocm-smi/telegraf-mi100-rocm602.json"))
    assert facts["driver_version"] == "6.3.6"
    assert [g["pci_address"] for g in facts["devices"]] == [
        "0000:83:00.0",
        "0000:a3:00.0",
        "0000:c3:00.0",
        "0000:e3:00.0",
    ]
    assert {g["model"] for g in facts["devices"]} == {"Arcturus GL-XL [Instinct MI100]"}
    assert facts["devices"][1]["memory_total_bytes"] == 34342961152
    with pytest.raises(ParseError, match="rocm-smi"):
        parse_rocm_smi("ERROR: No AMD GPUs found")


def test_npu_smi_two_npus_with_hbm() -> None:
    facts = parse_npu_smi(recorded("npu-smi/nputop-910b2c-2npu.txt"))
    assert facts["driver_version"] == "23.0.2.1"
    assert [(n["index"], n["model"], n["pci_address"]) for n in facts["devices"]] == [
        (0, "910B2C", "0000:5a:00.0"),
        (1, "910B2C", "0000:19:00.0"),
    ]
    assert facts["devices"][0]["memory_total_bytes"] == 65536 * 1024**2
    assert facts["devices"][0]["temperature_c"] == 51.0


def test_npu_smi_two_chips_per_npu() -> None:
    facts = parse_npu_smi(recorded("npu-smi/nputop-ascend910-2npu-4chip.txt"))
    assert [(n["index"], n["chip"]) for n in facts["devices"]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    with pytest.raises(ParseError, match="npu-smi"):
        parse_npu_smi("dcmi model initialized failed, because the device is used. ret is -8020")
