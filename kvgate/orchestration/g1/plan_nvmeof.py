"""G1 checks on NVMe-oF path quality and on the array itself: ANA state per path, I/O policy,
loss/reconnect/fast-fail timeouts, I/O queues, a persistent connect configuration, kernel-log
transport errors, and the array namespaces' model, firmware, capacity and volatile write cache
against the BOM."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from kvgate.base.criteria import Criterion, Judgement, Measurement, Verdict
from kvgate.configuration.inventory import NvmeofExpect
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import PlanContext, PlannedCheck
from kvgate.probes.facts import Collected

TB = 1e12
Ev = Callable[[PlannedCheck, Collected], Judgement]


def _ctrls(col: Collected, transport: str) -> list[dict[str, Any]]:
    return [c for c in col.facts.get("controllers", []) if c["transport"] == transport]


def _by_subsystem(col: Collected, transport: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for c in _ctrls(col, transport):
        out.setdefault(str(c["nqn"]), []).append(c)
    return out


def _none(transport: str) -> str:
    return f"no {transport} controller connected"


def _ana(transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    parts = []
    for nqn, ctrls in sorted(_by_subsystem(col, transport).items()):
        states = {c["name"]: sorted({p["ana_state"] for p in c["paths"] if p["ana_state"]}) for c in ctrls}
        if not any(states.values()):
            parts.append(
                checks.part_invalid(
                    check, f"{nqn}.optimized_paths", "no ana_state in sysfs (array without ANA?)"
                )
            )
            continue
        optimized = min(optimized_per_namespace(ctrls).values())
        note = "; ".join(f"{c['name']} {c['address']}: {_path_state(states[c['name']], c)}" for c in ctrls)
        parts.append(
            checks.with_note(checks.measure(check, col, optimized, metric=f"{nqn}.optimized_paths"), note)
        )
    return checks.combine(check, parts, checks.errors_text(col, "sysfs") or _none(transport))


def optimized_per_namespace(ctrls: list[dict[str, Any]]) -> dict[str, int]:
    """Live optimized paths of each namespace (``nvme0c1n2`` is namespace ``n2`` through ``nvme1``).

    ANA states are per namespace group: an array whose controllers each own some namespaces shows
    every controller optimized for one namespace and not for another, so a subsystem has as many
    optimized paths as its worst namespace. A controller that is not live keeps its last ANA state
    (a reconnecting path still reads `optimized`): only a live path counts.
    """
    counts: dict[str, int] = {}
    for c in ctrls:
        for p in c["paths"]:
            ns = "n" + str(p["namespace"]).rsplit("n", 1)[-1]
            counts[ns] = counts.get(ns, 0) + (c["state"] == "live" and p["ana_state"] == "optimized")
    return counts


def _path_state(ana: list[str], ctrl: dict[str, Any]) -> str:
    """``optimized``, or ``optimized (connecting)`` for a path that is not live."""
    shown = "/".join(ana) or "?"
    return shown if ctrl["state"] == "live" else f"{shown} ({ctrl['state'] or 'state unknown'})"


def _iopolicy(transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    policies = {s["nqn"]: s["iopolicy"] for s in col.facts.get("subsystems", [])}
    parts = [
        checks.measure(check, col, policies.get(nqn), metric=f"{nqn}.iopolicy")
        if policies.get(nqn)
        else checks.part_invalid(
            check, f"{nqn}.iopolicy", "no iopolicy in /sys/class/nvme-subsystem (native multipath off?)"
        )
        for nqn in sorted(_by_subsystem(col, transport))
    ]
    return checks.combine(check, parts, checks.errors_text(col, "sysfs") or _none(transport))


def _timeout_part(key: str, check: PlannedCheck, col: Collected, ctrl: dict[str, Any]) -> Judgement:
    label, value, c = f"{ctrl['name']}.{check.criterion.metric}", ctrl.get(key), check.criterion
    if value is None:
        return checks.part_invalid(check, label, f"{key.removesuffix('_s')} not in sysfs (older kernel?)")
    if value != "off":
        return checks.measure(check, col, value, metric=label)
    ok = c.comparator == ">="  # off = never: meets any minimum, exceeds any maximum
    sym = "≥" if ok else "≤"
    text = f"{label}=off (never) {sym} {c.expected} {c.unit}".rstrip()
    return Judgement(
        Verdict.PASS if ok else Verdict.FAIL,
        text,
        c,
        Measurement(label, "off", c.unit, checks.evidence(check, col)),
    )


def _per_ctrl(key: str, transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    parts = [_timeout_part(key, check, col, c) for c in _ctrls(col, transport)]
    return checks.combine(check, parts, checks.errors_text(col, "sysfs") or _none(transport))


def configured(ctrl: dict[str, Any], persistent: dict[str, Any]) -> bool:
    address = str(ctrl.get("address") or "")
    entries = persistent.get("discovery_conf", []) + persistent.get("config_json", [])
    return any(
        (e.get("traddr") and f"traddr={e['traddr']}," in f"{address},") or e.get("nqn") == ctrl["nqn"]
        for e in entries
    )


def _persistent(transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    persistent = col.facts.get("persistent")
    if persistent is None:
        return checks.not_reported(check, col, missing=_none(transport))
    unit = persistent.get("autoconnect")
    parts = []
    for c in _ctrls(col, transport):
        found = configured(c, persistent)
        note = f"{c['address']} in discovery.conf/config.json: {found}; nvmf-autoconnect {unit or 'absent'}"
        ok = found and unit == "enabled"
        parts.append(checks.with_note(checks.measure(check, col, ok, metric=f"{c['name']}.persistent"), note))
    return checks.combine(check, parts, _none(transport))


def _log(check: PlannedCheck, col: Collected) -> Judgement:
    log = col.facts.get("kernel_log")
    if log is None:
        return checks.not_reported(check, col, "kernel log", missing="kernel log not read")
    kinds = ", ".join(f"{k} {n}" for k, n in log["by_kind"].items())
    first = " | ".join(log["first"][:3])
    return checks.with_note(
        checks.measure(check, col, log["errors"]),
        f"{log['source']}: {kinds or 'none'}{' — ' + first if first else ''}",
    )


def _array(key: str, scale: float | None, transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    """The array's namespaces (nvme list, not local) over the BOM's transport."""
    if failed := checks.probe_error(check, col, "nvme list", "transports"):
        return failed
    devs = [d for d in col.facts.get("devices", []) if not d.get("local") and d.get("transport") == transport]
    parts = []
    for d in devs:
        label, value = f"{d['name']}.{check.criterion.metric}", d.get(key)
        if value is None:
            parts.append(
                checks.part_invalid(check, label, (d.get("invalid") or {}).get(key) or f"{key} not reported")
            )
        else:
            parts.append(
                checks.measure(check, col, round(value * scale, 3) if scale else value, metric=label)
            )
    return checks.combine(check, parts, f"no {transport} namespace in nvme list")


def _write_cache(transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    """Each of the array's namespace heads: the volatile write cache the array reports."""
    nqns = set(_by_subsystem(col, transport))
    heads = [
        ns for s in col.facts.get("subsystems", []) if s["nqn"] in nqns for ns in s.get("namespaces", [])
    ]
    parts = [
        checks.measure(check, col, ns["write_cache"], metric=f"{ns['name']}.write_cache")
        if ns["write_cache"]
        else checks.part_invalid(check, f"{ns['name']}.write_cache", "no queue/write_cache in sysfs")
        for ns in heads
    ]
    return checks.combine(check, parts, checks.errors_text(col, "sysfs") or f"no {transport} namespace head")


def _specs(e: NvmeofExpect) -> list[tuple[str, str, str, str, Any, str, str, Ev, str]]:
    t = e.transport  # check, rule, metric, comparator, expected, field, unit, evaluator, family
    return [
        (
            "ana",
            "G1-NVMEOF-3",
            "optimized_paths",
            ">=",
            e.min_optimized_paths or None,
            "min_optimized_paths",
            "",
            partial(_ana, t),
            "nvmeof",
        ),
        (
            "iopolicy",
            "G1-NVMEOF-4",
            "iopolicy",
            "==",
            e.iopolicy,
            "iopolicy",
            "",
            partial(_iopolicy, t),
            "nvmeof",
        ),
        (
            "ctrl_loss_tmo",
            "G1-NVMEOF-5",
            "ctrl_loss_tmo_s",
            ">=",
            e.min_ctrl_loss_tmo_s,
            "min_ctrl_loss_tmo_s",
            "s",
            partial(_per_ctrl, "ctrl_loss_tmo_s", t),
            "nvmeof",
        ),
        (
            "reconnect_delay",
            "G1-NVMEOF-6",
            "reconnect_delay_s",
            "<=",
            e.max_reconnect_delay_s,
            "max_reconnect_delay_s",
            "s",
            partial(_per_ctrl, "reconnect_delay_s", t),
            "nvmeof",
        ),
        (
            "fast_io_fail_tmo",
            "G1-NVMEOF-7",
            "fast_io_fail_tmo_s",
            "<=",
            e.max_fast_io_fail_tmo_s,
            "max_fast_io_fail_tmo_s",
            "s",
            partial(_per_ctrl, "fast_io_fail_tmo_s", t),
            "nvmeof",
        ),
        (
            "io_queues",
            "G1-NVMEOF-8",
            "io_queues",
            ">=",
            e.min_io_queues,
            "min_io_queues",
            "",
            partial(_per_ctrl, "io_queues", t),
            "nvmeof",
        ),
        (
            "persistent",
            "G1-NVMEOF-9",
            "persistent_connect",
            "==",
            True if e.persistent else None,
            "persistent",
            "",
            partial(_persistent, t),
            "nvmeof",
        ),
        (
            "transport_errors",
            "G1-NVMEOF-10",
            "transport_errors",
            "<=",
            e.max_transport_errors,
            "max_transport_errors",
            "",
            _log,
            "nvmeof",
        ),
        (
            "model",
            "G1-NVMEOF-11",
            "model",
            "matches",
            e.model,
            "model",
            "",
            partial(_array, "model", None, t),
            "nvme",
        ),
        (
            "firmware",
            "G1-NVMEOF-12",
            "firmware",
            "matches",
            e.firmware,
            "firmware",
            "",
            partial(_array, "firmware", None, t),
            "nvme",
        ),
        (
            "capacity",
            "G1-NVMEOF-13",
            "capacity_gb",
            ">=",
            e.capacity_gb,
            "capacity_gb",
            "GB",
            partial(_array, "capacity_bytes", 1e-9, t),
            "nvme",
        ),
        (
            "write_cache",
            "G1-NVMEOF-14",
            "write_cache",
            "==",
            e.write_cache,
            "write_cache",
            "",
            partial(_write_cache, t),
            "nvmeof",
        ),
    ]


def nvmeof_quality_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Every path-quality and array check the BOM's `nvmeof:` asks for (none when subsystems: 0)."""
    e = pc.expect.nvmeof
    if e is None or e.subsystems == 0:
        return []
    out = []
    for name, rule, metric, comparator, expected, field, unit, ev, family in _specs(e):
        if expected is None:
            continue
        crit = Criterion(rule, metric, comparator, expected, unit=unit, source=pc.source("nvmeof", field))
        tool = "nvme" if family == "nvme" else None
        out.append(checks.planned(pc, f"nvmeof.{name}", family, crit, ev, tool=tool))
    return out
