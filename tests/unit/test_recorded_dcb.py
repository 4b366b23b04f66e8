"""`dcb pfc show` of a real DCB NIC (HiSilicon hns3), from a kernel commit message (PROVENANCE.md).

The values asserted were read off the recorded files by hand.
"""

from __future__ import annotations

from pathlib import Path

from replay import ok
from test_facts_fabric import lab_g1

from kvgate.base.criteria import Verdict
from kvgate.probes.facts.roce import parse_dcb_pfc

DATA = Path(__file__).parents[1] / "data" / "recorded" / "dcb"


def pfc_on(name: str) -> list[int]:
    qos = parse_dcb_pfc((DATA / name).read_text())
    assert (qos["tool"], qos["trust"]) == ("dcb", None)
    return [prio for prio, on in enumerate(qos["pfc"]) if on]


def test_an_hns3_port_with_pfc_off_everywhere() -> None:
    assert pfc_on("kernel-hns3-8c1671e0-all-off.txt") == []


def test_an_hns3_driver_that_reported_every_priority_of_tc0_as_lossless_is_read_as_printed() -> None:
    """The driver bug of the commit: 0–3 set, all eight shown on; kvgate reads what dcb prints."""
    assert pfc_on("kernel-hns3-8c1671e0-misreported-all-on.txt") == list(range(8))


def test_g1_fails_pfc_on_the_storage_priority_of_the_hns3_port() -> None:
    results = lab_g1(
        {"dcb pfc show": ok("dcb/kernel-hns3-8c1671e0-all-off.txt")}, tools={"dcb", "ibv_devinfo"}
    )
    assert results["roce[^ens1$].pfc"] == (
        Verdict.FAIL,
        "ens1.pfc_prio3=False = True — PFC on priorities none (dcb)",
    )
