"""G1 checks on the host's connections and setup: NICs and RDMA, volumes, clock, tool versions."""

from __future__ import annotations

import dataclasses
import re
from functools import partial
from typing import Any

from kvgate.base.criteria import Criterion, Judgement
from kvgate.base.units import GiB
from kvgate.configuration.inventory import NicExpect, Volume, parse_constraint
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import HEALTH, Evaluator, PlanContext, PlannedCheck
from kvgate.probes.facts import Collected


def _matched(col: Collected, pattern: str) -> list[dict[str, Any]]:
    return [i for i in col.facts.get("interfaces", []) if re.search(pattern, i["name"])]


def _nic_count(pattern: str, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col):
        return failed
    found = _matched(col, pattern)
    return checks.with_note(
        checks.measure(check, col, len(found)), ", ".join(i["name"] for i in found) or None
    )


def _nic_attr(pattern: str, key: str, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col):
        return failed
    parts = []
    for nic in _matched(col, pattern):
        label = f"{nic['name']}.{check.criterion.metric}"
        value = nic.get(key)
        parts.append(
            checks.part_invalid(check, label, f"{key} not reported (link down?)")
            if value is None
            else checks.measure(check, col, value, metric=label)
        )
    return checks.combine(check, parts, f"no interface matches /{pattern}/")


def _rdma_port(pattern: str, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col):
        return failed
    parts = []
    for port in col.facts.get("ports", []):
        for dev in (n for n in port["netdevs"] if re.search(pattern, n)):
            label = f"{dev}.rdma_port_state"
            note = f"{port['device']} port {port['port']}, {port['link_layer']}, {port['gids']} GIDs"
            parts.append(checks.with_note(checks.measure(check, col, port["state"], metric=label), note))
    return checks.combine(check, parts, f"no RDMA port is bound to an interface matching /{pattern}/")


def _nic(pc: PlanContext, i: int, nic: NicExpect) -> list[PlannedCheck]:
    # check, rule, metric, comparator, expected, inventory field (None: health rule), fact key, unit
    specs = [
        ("count", "G1-NIC-1", "nic_count", ">=", nic.count, "count", "", ""),
        ("operstate", "G1-NIC-2", "operstate", "==", "up", None, "operstate", ""),
        ("speed", "G1-NIC-3", "speed_mbps", ">=", nic.speed_mbps, "speed_mbps", "speed_mbps", "Mb/s"),
        ("mtu", "G1-NIC-4", "mtu", "==", nic.mtu, "mtu", "mtu", ""),
        ("driver", "G1-NIC-5", "driver", "==", nic.driver, "driver", "driver", ""),
        ("rdma", "G1-NIC-6", "rdma_port_state", "==", "ACTIVE" if nic.rdma else None, "rdma", "", ""),
    ]
    out = []
    for name, rule, metric, comparator, expected, field, key, unit in specs:
        if expected is None:
            continue
        source = pc.source("nics", i, field) if field else f"{HEALTH}: {metric} {comparator} {expected}"
        crit = Criterion(rule, metric, comparator, expected, unit=unit, source=source)
        family, ev = _nic_evaluator(name, nic.name, key)
        out.append(checks.planned(pc, f"nic[{nic.name}].{name}", family, crit, ev))
    return out


def _nic_evaluator(name: str, pattern: str, key: str) -> tuple[str, Evaluator]:
    if name == "count":
        return "nics", partial(_nic_count, pattern)
    if name == "rdma":
        return "rdma", partial(_rdma_port, pattern)
    return "nics", partial(_nic_attr, pattern, key)


def nic_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Per BOM NIC pattern: count, link up, speed, MTU, driver, and an ACTIVE RDMA port."""
    return [check for i, nic in enumerate(pc.expect.nics) for check in _nic(pc, i, nic)]


def _volume_facts(name: str, col: Collected) -> dict[str, Any] | None:
    found: dict[str, Any] | None = col.facts.get("volumes", {}).get(name)
    return found


def _mount(name: str, check: PlannedCheck, col: Collected) -> Judgement:
    v = _volume_facts(name, col)
    if v is None:
        return checks.not_reported(check, col, missing=f"volume {name} was not probed")
    where = (
        f"on {v['target']} from {v['source']}"
        if v.get("target")
        else checks.errors_text(col, f"findmnt {name}")
    )
    return checks.with_note(checks.measure(check, col, v["exists"]), where)


def _volume_key(name: str, key: str, scale: float | None, check: PlannedCheck, col: Collected) -> Judgement:
    v = _volume_facts(name, col) or {}
    if v.get(key) is None:
        probes = (f"volume {name}", f"findmnt {name}", f"df {name}")
        return checks.not_reported(check, col, *probes, missing=f"{key} not reported")
    return checks.measure(check, col, round(v[key] * scale, 3) if scale else v[key])


def _options(name: str, check: PlannedCheck, col: Collected) -> Judgement:
    v = _volume_facts(name, col) or {}
    if v.get("options") is None:
        return checks.not_reported(
            check, col, f"volume {name}", f"findmnt {name}", missing="options not reported"
        )
    present = dataclasses.replace(
        check, criterion=dataclasses.replace(check.criterion, comparator="==", expected=True)
    )
    parts = [
        checks.measure(present, col, opt in v["options"], metric=f"option[{opt}]")
        for opt in check.criterion.expected
    ]
    return checks.with_note(
        checks.combine(check, parts, "no option required"), f"mounted with {','.join(v['options'])}"
    )


def _odirect(name: str, check: PlannedCheck, col: Collected) -> Judgement:
    v = _volume_facts(name, col)
    if v is None:
        return checks.not_reported(check, col, name, missing=f"volume {name} was not probed")
    if v["ok"] is None:
        return checks.invalid(check, v["status"])
    sizes = ", ".join(f"{r['block_bytes']} B" for r in v.get("results", []))
    note = f"{sizes} (logical {v.get('logical_block_bytes')} B, fs {v.get('fs_block_bytes')} B)"
    return checks.with_note(checks.measure(check, col, v["ok"]), note if v["ok"] else v["status"])


def _counters(name: str, check: PlannedCheck, col: Collected) -> Judgement:
    v = _volume_facts(name, col)
    if v is None:
        return checks.not_reported(check, col, name, missing=f"volume {name} was not probed")
    counts, read = v.get("counts") or {}, v.get("read_bytes")
    moved = counts.get("device_read_bytes")
    if not v.get("ok"):
        return checks.invalid(check, f"{v.get('reason')} ({v.get('how')})")
    return checks.with_note(
        checks.measure(check, col, moved / read if read else None), f"{v.get('how')}: {moved} B for {read} B"
    )


def _volume(pc: PlanContext, name: str, vol: Volume) -> list[PlannedCheck]:
    specs: list[tuple[str, str, str, str, Any, str, str, Evaluator]] = [
        # check, rule, metric, comparator, expected, inventory field, unit, evaluator
        ("mount", "G1-VOL-1", "path_exists", "==", True, "path", "", partial(_mount, name)),
        (
            "fstype",
            "G1-VOL-2",
            "fstype",
            "==",
            vol.fstype,
            "fstype",
            "",
            partial(_volume_key, name, "fstype", None),
        ),
        (
            "options",
            "G1-VOL-3",
            "mount_options",
            "in",
            vol.mount_options or None,
            "mount_options",
            "",
            partial(_options, name),
        ),
        (
            "source",
            "G1-VOL-6",
            "source",
            "==",
            vol.device,
            "device",
            "",
            partial(_volume_key, name, "source", None),
        ),
        (
            "free",
            "G1-VOL-4",
            "free_gib",
            ">=",
            vol.min_free_gib,
            "min_free_gib",
            "GiB",
            partial(_volume_key, name, "free_bytes", 1 / GiB),
        ),
        (
            "odirect",
            "G1-VOL-5",
            "odirect_ok",
            "==",
            True if vol.scratch else None,
            "scratch",
            "",
            partial(_odirect, name),
        ),
        (
            "counters",
            "G1-VOL-7",
            "counters_moved_ratio",
            ">=",
            1.0,
            "path",
            "x",
            partial(_counters, name),
        ),
    ]
    out = []
    for check, rule, metric, comparator, expected, field, unit, ev in specs:
        if expected is None:
            continue
        crit = Criterion(
            rule, metric, comparator, expected, unit=unit, source=f"inventory: volumes.{name}.{field}"
        )
        family, tool = {"odirect": ("odirect", "python3"), "counters": ("counters", "python3")}.get(
            check, ("mounts", "findmnt")
        )
        out.append(checks.planned(pc, f"volume[{name}].{check}", family, crit, ev, tool=tool))
    return out


def volume_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Per volume on this host: mounted, fstype, options, source, free space, O_DIRECT (scratch), counters."""
    vols = pc.inventory.volumes_of(pc.host)
    return [check for name, vol in vols.items() for check in _volume(pc, name, vol)]


def _clock(check: PlannedCheck, col: Collected) -> Judgement:
    if "offset_ms" not in col.facts:
        if {"chronyc", "timedatectl"} <= set(col.missing_tools):
            return checks.invalid(check, "neither chronyc nor timedatectl is installed: clock offset unknown")
        return checks.not_reported(check, col, missing="clock offset not reported")
    if col.facts["abs_offset_ms"] is None:
        synced = "synchronised" if col.facts.get("synchronised") else "NOT synchronised"
        return checks.invalid(
            check, f"offset not measurable without chrony; timedatectl reports NTP {synced}"
        )
    if not col.facts.get("synchronised"):
        return checks.invalid(check, col.facts.get("unsynchronised_reason") or "chrony: not synchronised")
    j = checks.measure(check, col, col.facts["abs_offset_ms"])
    return checks.with_note(j, f"reference {col.facts.get('reference')}, stratum {col.facts.get('stratum')}")


def clock_checks(pc: PlanContext) -> list[PlannedCheck]:
    """|system clock − NTP| ≤ the BOM's maximum, from chrony's tracking report."""
    limit = pc.expect.max_clock_offset_ms
    if limit is None:
        return []
    crit = Criterion(
        "G1-CLOCK-1", "abs_offset_ms", "<=", limit, unit="ms", source=pc.source("max_clock_offset_ms")
    )
    return [checks.planned(pc, "clock.offset", "clock", crit, _clock)]


def _tool_version(tool: str, check: PlannedCheck, col: Collected) -> Judgement:
    found = col.facts.get("tools", {}).get(tool, {})
    if found.get("version") is None:
        return checks.not_reported(check, col, tool, missing=f"{tool} version not reported")
    return checks.with_note(checks.measure(check, col, found["version"]), found.get("output"))


def tool_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Each tool in the BOM's `tools:` map is installed at the required version."""
    out = []
    for tool, text in pc.expect.tools.items():
        tc = parse_constraint(text)
        crit = Criterion(
            "G1-TOOL-1", f"{tool}_version", tc.comparator, tc.version, source=pc.source("tools", tool)
        )
        out.append(
            checks.planned(
                pc, f"tool[{tool}].version", "tools", crit, partial(_tool_version, tool), tool=tool
            )
        )
    return out
