"""The real nvme-cli 2.3 `list-subsys -o json` on libnvme's recorded sysfs of two hosts (PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

from replay import ok
from test_g1_plan import run_g1, scratch  # noqa: F401 (scratch is a fixture run_g1 needs)

from kvgate.base.criteria import Verdict
from kvgate.probes.facts.nvme import parse_list_subsys

DATA = Path(__file__).parents[1] / "data" / "recorded" / "nvme" / "list-subsys"
POWER = "replay-libnvme-tree-pcie-power-dualport.json"


def subsystems(name: str) -> list[dict[str, object]]:
    return parse_list_subsys((DATA / name).read_text())["subsystems"]


def test_a_dual_ported_pcie_drive_is_one_subsystem_with_two_live_paths() -> None:
    pm1735a, pm1743 = subsystems(POWER)
    assert pm1735a["nqn"] == "nqn.1994-11.com.samsung:nvme:PM1735a:2.5-inch:S6RTNE0R900057"
    assert [(p["name"], p["transport"], p["address"], p["state"]) for p in pm1735a["paths"]] == [
        ("nvme2", "pcie", "058e:78:00.0", "live"),
        ("nvme1", "pcie", "052e:78:00.0", "live"),
    ]
    assert [p["ana_state"] for p in pm1735a["paths"]] == [None, None]  # 2.3 prints ANA only for a namespace
    assert (pm1743["name"], len(pm1743["paths"])) == ("nvme-subsys0", 1)


def test_a_controller_nvme_cli_cannot_address_leaves_a_subsystem_without_paths() -> None:
    """Apple silicon: nvme-cli 2.3 said "No transport address for 'apple-nvme'" on stderr and exited 0."""
    (apple,) = subsystems("replay-libnvme-tree-apple-nvme.json")
    assert apple["nqn"] == "nqn.2014.08.org.nvmexpress:106b106b0ba01e49841cc620    APPLE SSD AP2048Z"
    assert apple["paths"] == []


def test_g1_counts_no_array_subsystem_on_a_host_with_only_local_pcie_drives(
    scratch: tuple[Path, str],  # noqa: F811
) -> None:
    results = run_g1(scratch, replace={"nvme list-subsys -o json": ok(f"nvme/list-subsys/{POWER}")})
    assert results["nvmeof.subsystems"] == (Verdict.FAIL, "tcp_subsystems=0 ≥ 1")
    assert results["nvmeof.live_paths"][0] is Verdict.INVALID
