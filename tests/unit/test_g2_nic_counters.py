"""G2's fabric check on recorded `ethtool -S` outputs of mlx5, bnxt_en and ice NICs.

A baseline during which a storage NIC discarded packets or overran its buffers FAILs with
the counters that moved; pause frames and CNPs are shown, never judged.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from _pytest.compat import NOTSET
from replay import Replay, recorded

from kvgate.base.criteria import Verdict
from kvgate.base.errors import LabError
from kvgate.configuration.gateconfig import in_memory
from kvgate.configuration.inventory.schema import Inventory
from kvgate.orchestration.g2.nic_counters import (
    GENERIC,
    SNAPSHOT,
    deltas,
    evaluate_nic,
    judged_counters,
    nic_plan,
    parse_ethtool_stats,
    snapshot,
)
from kvgate.orchestration.pytest_plugin import check_id
from kvgate.probes.facts.base import ParseError
from kvgate.transport.base import quote
from kvgate.transport.local import LocalExecutor

MLX5 = "ethtool/lore-mlx5-cx-kernel-5.15-nonzero.txt"
BNXT = "ethtool/go-ethtool-metrics-bnxt_en-sfp-10gsr85.txt"
ICE = "ethtool/go-ethtool-metrics-ice-sfp-25g.txt"


def test_recorded_counters_of_three_drivers() -> None:
    mlx5 = parse_ethtool_stats(recorded(MLX5))
    assert (mlx5["rx_discards_phy"], mlx5["rx_out_of_buffer"], mlx5["tx_global_pause"]) == (
        58591428329,
        990473555,
        5745042,
    )
    bnxt = parse_ethtool_stats(recorded(BNXT))
    assert (bnxt["rx_total_discard_pkts"], bnxt["[7]: rx_discards"], bnxt["rx_pfc_ena_frames_pri3"]) == (
        13,
        0,
        0,
    )
    ice = parse_ethtool_stats(recorded(ICE))
    assert (ice["rx_dropped.nic"], ice["rx_priority_3_xoff.nic"]) == (0, 0)
    assert [judged_counters(c) for c in (mlx5, bnxt, ice)] == [
        ("rx_discards_phy", "rx_out_of_buffer", "rdma:out_of_buffer"),
        ("rx_total_discard_pkts", "rdma:out_of_buffer"),
        ("rx_dropped.nic", "rdma:out_of_buffer"),
    ]


def test_text_without_statistics_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="ethtool -S: expected a 'NIC statistics:' header"):
        parse_ethtool_stats("no stats available\n")


def moved(name: str, **plus: int) -> str:
    """The recording with some counters advanced, as a second snapshot would read them."""
    lines = []
    for line in recorded(name).splitlines():
        key, _, value = line.strip().rpartition(": ")
        lines.append(f"     {key}: {int(value) + plus[key]}" if key in plus else line)
    return "\n".join(lines) + "\n"


def lab(**roce: int) -> Inventory:
    nic = {"name": "^ens1f0np0$", "rdma": True}
    expect = {"nics": [nic]} | ({"roce": roce} if roce else {})
    return Inventory.model_validate(
        {"site": "lab", "hosts": {"gpu-1": {"roles": ["storage-client"], "expect": expect}}}
    )


def judge_run(before: str, after: str, **roce: int) -> tuple[Verdict, str]:
    (check,) = nic_plan(in_memory(lab(**roce)))
    j = evaluate_nic(check, {"ens1f0np0": _delta(before, after)})
    return j.verdict, j.condition


def _delta(before: str, after: str) -> dict[str, int]:
    b, a = parse_ethtool_stats(before), parse_ethtool_stats(after)
    return {k: a[k] - b[k] for k in a if k in b}


def test_discards_during_the_baseline_fail_with_the_counters_shown() -> None:
    before = recorded(MLX5)
    after = moved(MLX5, rx_discards_phy=1500, rx_out_of_buffer=20, tx_global_pause=7, rx_prio0_discards=1500)
    verdict, condition = judge_run(before, after)
    assert verdict is Verdict.FAIL
    assert condition == (
        "ens1f0np0.rx_discards=1520 ≤ 0 — rx_out_of_buffer +20, rx_discards_phy +1500, "
        "rx_prio0_discards +1500, tx_global_pause +7"
    )


def test_a_quiet_baseline_passes_and_pause_alone_is_shown_not_judged() -> None:
    assert judge_run(recorded(MLX5), recorded(MLX5)) == (
        Verdict.PASS,
        "ens1f0np0.rx_discards=0 ≤ 0 — no discard, pause or CNP counter moved",
    )
    verdict, condition = judge_run(recorded(MLX5), moved(MLX5, tx_pause_ctrl_phy=40))
    assert (verdict, condition) == (Verdict.PASS, "ens1f0np0.rx_discards=0 ≤ 0 — tx_pause_ctrl_phy +40")


def test_a_site_limit_and_other_drivers() -> None:
    after = moved(BNXT, rx_total_discard_pkts=3, rx_pfc_ena_frames_pri3=90)
    assert judge_run(recorded(BNXT), after)[0] is Verdict.FAIL
    assert judge_run(recorded(BNXT), after, max_rx_discards=5) == (
        Verdict.PASS,
        "ens1f0np0.rx_discards=3 ≤ 5 — rx_total_discard_pkts +3, rx_pfc_ena_frames_pri3 +90",
    )


def test_an_unknown_driver_is_invalid_never_a_pass() -> None:
    virtio = "NIC statistics:\n     rx_queue_0_packets: 10\n     tx_queue_0_packets: 12\n"
    verdict, condition = judge_run(virtio, virtio)
    assert verdict is Verdict.INVALID
    assert (
        condition == "ens1f0np0: no discard counter known for this driver, nor the kernel's (2 counters read)"
    )


def test_the_plan_covers_storage_clients_rdma_nics() -> None:
    (check,) = nic_plan(in_memory(lab(max_rx_discards=2)))
    assert (check.host, check.check, check.criterion.expected) == ("gpu-1", "nic[^ens1f0np0$].discards", 2)
    assert check.criterion.source == "inventory: roce.max_rx_discards"
    no_client = Inventory.model_validate(
        {"site": "s", "hosts": {"h": {"expect": {"nics": [{"name": "x", "rdma": True}]}}}}
    )
    assert nic_plan(in_memory(no_client)) == []


def test_a_snapshot_reads_ethtool_and_the_rdma_hw_counters() -> None:
    rdma = "     rdma:np_cnp_sent: 4\n     rdma:rp_cnp_handled: 2\n     rdma:out_of_buffer: 0\n"
    replay = Replay(
        {
            "ls /sys/class/net": (0, "eno1\nens1f0np0\nlo\n", ""),
            quote(SNAPSHOT, "ens1f0np0", "ens1f0np0", "ens1f0np0"): (0, recorded(MLX5) + rdma, ""),
        },
        set(),
    )
    snap = snapshot(replay, ("^ens1f0np0$",))
    assert list(snap.counters) == ["ens1f0np0"]
    assert (
        snap.counters["ens1f0np0"]["rdma:np_cnp_sent"],
        snap.counters["ens1f0np0"]["rx_discards_phy"],
    ) == (
        4,
        58591428329,
    )
    later = snapshot(replay, ("^ens1f0np0$",))
    assert deltas(snap, later)["ens1f0np0"]["rdma:out_of_buffer"] == 0


def test_a_snapshot_that_cannot_be_parsed_is_a_lab_error() -> None:
    replay = Replay({"ls /sys/class/net": (0, "ens1f0np0\n", ""), "ethtool -S": (0, "garbage", "")}, set())
    with pytest.raises(LabError, match="ens1f0np0: ethtool -S: expected"):
        snapshot(replay, ("ens1",))


def test_a_gate_module_whose_plan_is_empty_has_no_check_ids() -> None:
    """A lab without RDMA NICs plans no NIC check: pytest's placeholder item is no check (main crashed)."""
    placeholder = SimpleNamespace(callspec=SimpleNamespace(params={"check": NOTSET}))
    assert check_id(placeholder) == ""  # type: ignore[arg-type]


def test_any_other_nic_is_judged_by_the_kernels_generic_counters_and_says_so() -> None:
    """Before, a driver other than mlx5, bnxt, ice or i40e made G2 INVALID. Read here from this
    machine's kernel (/sys/class/net/lo/statistics; its ethtool -S has no statistics, or no ethtool)."""
    ex = LocalExecutor()
    before, after = snapshot(ex, ("^lo$",)), snapshot(ex, ("^lo$",))
    ex.close()
    read = "(driver's counters unknown: the kernel's " + ", ".join(GENERIC) + " read)"
    moved = deltas(before, after)
    assert judged_counters(moved["lo"]) == GENERIC
    dropped = {"lo": moved["lo"] | {"sys:rx_missed_errors": 3}}  # the device ran out of buffers
    lo = Inventory.model_validate(
        {
            "site": "lab",
            "hosts": {
                "h": {"roles": ["storage-client"], "expect": {"nics": [{"name": "^lo$", "rdma": True}]}}
            },
        }
    )
    (check,) = nic_plan(in_memory(lo))
    judged = evaluate_nic(check, dropped)
    verdict, condition = judged.verdict, judged.condition
    assert verdict is Verdict.FAIL
    assert condition.startswith(f"lo.rx_discards=3 ≤ 0 {read} — "), condition
    assert "sys:rx_missed_errors +3" in condition
