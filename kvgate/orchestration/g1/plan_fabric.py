"""G1 checks on the RoCEv2 fabric of the storage interfaces (the BOM's `nics` with `rdma: true`):
PFC on the storage priority, DSCP trust, ECN/DCQCN, a RoCE v2 GID on the storage address,
rdma_cm's default mode and the RoCE path MTU."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from kvgate.base.criteria import Criterion, Judgement
from kvgate.configuration.inventory import NicExpect, RoceExpect
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import PlanContext, PlannedCheck
from kvgate.probes.facts import Collected

Part = Callable[[PlannedCheck, Collected, str, dict[str, Any]], Judgement]
NO_ECN = (
    "no /sys/class/net/{nd}/ecn (MLNX_OFED's DCQCN switches); with an inbox mlx5 driver DCQCN is set in "
    "firmware (mlxconfig ROCE_CC_PRIO_MASK_P1), which kvgate does not read"
)


def _each(pattern: str, part: Part, check: PlannedCheck, col: Collected) -> Judgement:
    """One part per RoCE interface whose name matches the BOM pattern."""
    found = {n: i for n, i in col.facts.get("interfaces", {}).items() if re.search(pattern, n)}
    parts = [part(check, col, name, iface) for name, iface in sorted(found.items())]
    why = checks.errors_text(col, "sysfs") or f"no RoCE port is bound to an interface matching /{pattern}/"
    return checks.combine(check, parts, why)


def _qos_missing(check: PlannedCheck, col: Collected, name: str) -> Judgement:
    return checks.part_invalid(
        check, f"{name}.qos", checks.errors_text(col, f"mlnx_qos {name}", f"dcb pfc {name}") or "not read"
    )


def _pfc(prio: int, check: PlannedCheck, col: Collected, name: str, iface: dict[str, Any]) -> Judgement:
    qos = iface.get("qos")
    if qos is None:
        return _qos_missing(check, col, name)
    on = [p for p, flag in enumerate(qos["pfc"]) if flag]
    j = checks.measure(check, col, qos["pfc"][prio], metric=f"{name}.pfc_prio{prio}")
    return checks.with_note(j, f"PFC on priorities {on or 'none'} ({qos['tool']})")


def _trust(check: PlannedCheck, col: Collected, name: str, iface: dict[str, Any]) -> Judgement:
    qos = iface.get("qos")
    if qos is None:
        return _qos_missing(check, col, name)
    if qos["trust"] is None:
        return checks.part_invalid(
            check, f"{name}.trust", f"{qos['tool']} shows no trust state; mlnx_qos -i {name} does"
        )
    return checks.measure(check, col, qos["trust"], metric=f"{name}.trust")


def _ecn(prio: int, check: PlannedCheck, col: Collected, name: str, iface: dict[str, Any]) -> Judgement:
    ecn = iface.get("ecn")
    if not ecn:
        return checks.part_invalid(check, f"{name}.ecn", NO_ECN.format(nd=name))
    np_on, rp_on = (ecn.get(side, {}).get(str(prio)) for side in ("np", "rp"))
    if np_on is None or rp_on is None:
        return checks.part_invalid(check, f"{name}.ecn", f"no roce_np/roce_rp switch for priority {prio}")
    j = checks.measure(check, col, bool(np_on and rp_on), metric=f"{name}.ecn_prio{prio}")
    return checks.with_note(j, f"roce_np {'on' if np_on else 'off'}, roce_rp {'on' if rp_on else 'off'}")


def _gid(
    addresses: tuple[str, ...], check: PlannedCheck, col: Collected, name: str, iface: dict[str, Any]
) -> Judgement:
    v2 = {g["ipv4"]: g for g in iface.get("gids", []) if g["type"] == "RoCE v2" and g["ipv4"]}
    listed = ", ".join(f"[{g['index']}] {g['type']} {g['ipv4'] or g['gid']}" for g in iface.get("gids", []))
    present = all(a in v2 for a in addresses) if addresses else bool(v2)
    label = f"{name}.roce_v2_gid" + (f"[{','.join(addresses)}]" if addresses else "")
    return checks.with_note(checks.measure(check, col, present, metric=label), f"GIDs: {listed or 'none'}")


def _cm(check: PlannedCheck, col: Collected, name: str, iface: dict[str, Any]) -> Judgement:
    if iface.get("cm_mode") is None:
        why = (
            checks.errors_text(col, "rdma_cm")
            or "rdma_cm configfs not readable (configfs mounted? rdma_cm loaded? sudo?)"
        )
        return checks.part_invalid(check, f"{name}.cm_mode", why)
    return checks.measure(
        check, col, iface["cm_mode"], metric=f"{name}.{iface['device']}/{iface['port']}.cm_mode"
    )


def _mtu(check: PlannedCheck, col: Collected, name: str, iface: dict[str, Any]) -> Judgement:
    if iface.get("active_mtu") is None:
        return checks.part_invalid(
            check, f"{name}.active_mtu", checks.errors_text(col, "ibv_devinfo") or "not in ibv_devinfo"
        )
    j = checks.measure(check, col, iface["active_mtu"], metric=f"{name}.active_mtu")
    return checks.with_note(
        j, f"max_mtu {iface.get('max_mtu')}, {iface.get('port_state')}, transport {iface.get('transport')}"
    )


def _specs(r: RoceExpect) -> list[tuple[str, str, str, Any, str, Part, str | None]]:
    # check, rule, metric, expected, inventory field, part evaluator, tool whose absence FAILs
    return [
        (
            "pfc",
            "G1-ROCE-1",
            f"pfc_prio{r.priority}",
            True,
            "priority",
            partial(_pfc, r.priority),
            "mlnx_qos",
        ),
        ("trust", "G1-ROCE-2", "trust", r.trust, "trust", _trust, "mlnx_qos"),
        ("ecn", "G1-ROCE-3", f"ecn_prio{r.priority}", True, "ecn", partial(_ecn, r.priority), None),
        ("gid", "G1-ROCE-4", "roce_v2_gid", True, "addresses", partial(_gid, r.addresses), None),
        ("cm_mode", "G1-ROCE-5", "cm_mode", r.cm_mode, "cm_mode", _cm, None),
        ("mtu", "G1-ROCE-6", "active_mtu", r.active_mtu, "active_mtu", _mtu, "ibv_devinfo"),
    ]


def _nic(pc: PlanContext, r: RoceExpect, nic: NicExpect) -> list[PlannedCheck]:
    out = []
    for name, rule, metric, expected, field, part, tool in _specs(r):
        if name == "ecn" and not r.ecn:
            continue
        crit = Criterion(rule, metric, "==", expected, source=pc.source("roce", field))
        out.append(
            checks.planned(
                pc, f"roce[{nic.name}].{name}", "roce", crit, partial(_each, nic.name, part), tool=tool
            )
        )
    return out


def roce_checks(pc: PlanContext) -> list[PlannedCheck]:
    """The lossless RoCEv2 setup of every BOM NIC pattern with `rdma: true`, when `roce:` is set."""
    r = pc.expect.roce
    if r is None:
        return []
    nics = [n for n in pc.expect.nics if n.rdma]
    if not nics:
        crit = Criterion("G1-ROCE-1", "roce", "==", True, source=pc.source("roce"))
        return [checks.planned(pc, "roce", "roce", crit, None, skip="no BOM NIC has rdma: true")]
    return [check for nic in nics for check in _nic(pc, r, nic)]
