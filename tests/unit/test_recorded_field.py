"""G1 parsers on field outputs added for issue 14 (tests/data/recorded/PROVENANCE.md names each source).

Every value asserted here was read off the recorded file by hand; where kvgate had to
change to read a file right, the test says what main's parser returned instead.
"""

from __future__ import annotations

from pathlib import Path

from kvgate.facts.amd import parse_amd_static, parse_amd_topology

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
