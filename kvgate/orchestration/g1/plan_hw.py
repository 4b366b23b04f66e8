"""G1 checks on the machine itself: CPU, memory, OS, NVMe drives and NVMe-oF subsystems."""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

from kvgate.base.criteria import Criterion, Judgement
from kvgate.base.units import GiB
from kvgate.configuration.inventory import NvmeExpect
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import HEALTH, PlanContext, PlannedCheck
from kvgate.probes.facts import Collected

Spec = tuple[str, str, str, str, str]  # BOM field, rule, metric, comparator, fact key


CPU_FIELDS: tuple[Spec, ...] = (
    ("model", "G1-CPU-1", "cpu_model", "matches", "model"),
    ("cores", "G1-CPU-2", "cpu_cores", ">=", "cores"),
    ("sockets", "G1-CPU-3", "cpu_sockets", "==", "sockets"),
    ("threads", "G1-CPU-4", "cpu_threads", ">=", "threads"),
)
OS_FIELDS: tuple[Spec, ...] = (
    ("id", "G1-OS-1", "os_id", "==", "id"),
    ("version", "G1-OS-2", "os_version", "matches", "version_id"),
    ("kernel", "G1-OS-3", "kernel", "matches", "kernel"),
)


def cpu_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Model, physical cores, sockets, logical CPUs — each only when the BOM names it."""
    return _field_checks(pc, "cpu", pc.expect.cpu, CPU_FIELDS, tool="lscpu")


def memory_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Installed memory ≥ the BOM's GiB, less the tolerance firmware reserves."""
    e = pc.expect.memory
    if e is None:
        return []
    crit = Criterion(
        "G1-MEM-1",
        "mem_total_gib",
        ">=",
        e.total_gib,
        unit="GiB",
        tolerance=e.tolerance,
        source=pc.source("memory", "total_gib"),
    )
    return [
        checks.planned(
            pc, "memory.total", "memory", crit, partial(checks.fact_value, "mem_total_bytes", 1 / GiB)
        )
    ]


def os_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Distribution id, version (regex) and kernel release (regex)."""
    return _field_checks(pc, "os", pc.expect.os, OS_FIELDS)


def _field_checks(
    pc: PlanContext, family: str, e: Any, specs: tuple[Spec, ...], *, tool: str | None = None
) -> list[PlannedCheck]:
    """One check per field the BOM section ``e`` sets, judged on the family's fact of the same meaning."""
    out = []
    for name, rule, metric, comparator, key in specs:
        expected = getattr(e, name) if e else None
        if expected is not None:
            crit = Criterion(rule, metric, comparator, expected, source=pc.source(family, name))
            out.append(
                checks.planned(
                    pc, f"{family}.{name}", family, crit, partial(checks.fact_value, key, None), tool=tool
                )
            )
    return out


def _local(col: Collected) -> list[dict[str, Any]]:
    return [d for d in col.facts.get("devices", []) if d.get("local")]


def _nvme_count(check: PlannedCheck, col: Collected) -> Judgement:
    if (err := checks.errors_text(col, "nvme list", "transports")) or "count" not in col.facts:
        return checks.invalid(check, err or "nvme list reported nothing")
    names = ", ".join(d["name"] for d in _local(col)) or "none"
    return checks.with_note(checks.measure(check, col, col.facts["count"]), f"local namespaces: {names}")


def _device_value(
    key: str, scale: float | None, check: PlannedCheck, col: Collected, dev: dict[str, Any]
) -> Judgement:
    label = f"{dev['name']}.{check.criterion.metric}"
    value = dev[key] if key in dev else (dev.get("smart") or {}).get(key)
    if value is None:  # a value the tool printed but that cannot be true is INVALID data, not a FAIL
        why = (dev.get("invalid") or {}).get(key) or checks.errors_text(col, f"smart-log {dev['name']}")
        return checks.part_invalid(check, label, why or f"{key} not reported")
    return checks.measure(check, col, round(value * scale, 3) if scale else value, metric=label)


def _per_nvme(key: str, scale: float | None, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col, "nvme list"):
        return failed
    parts = [_device_value(key, scale, check, col, dev) for dev in _local(col)]
    return checks.combine(check, parts, "no local NVMe namespace found")


class _Spec(NamedTuple):
    """One NVMe check: id suffix, criterion parts, where the BOM says it, and the fact it reads."""

    name: str
    rule: str
    metric: str
    comparator: str
    expected: Any
    field: str | None = None  # inventory field under `nvme:`; None: a kvgate health rule
    unit: str = ""
    tolerance: float = 0.0
    key: str = ""
    scale: float | None = None


def _nvme_specs(e: NvmeExpect) -> list[_Spec]:
    specs = [
        _Spec("critical_warning", "G1-NVME-5", "critical_warning", "==", 0, key="critical_warning"),
        _Spec("media_errors", "G1-NVME-6", "media_errors", "==", 0, key="media_errors"),
        _Spec(
            "percentage_used",
            "G1-NVME-7",
            "percentage_used",
            "<=",
            e.max_percentage_used,
            "max_percentage_used",
            "%",
            key="percentage_used",
        ),
        _Spec(
            "temperature",
            "G1-NVME-8",
            "temperature_c",
            "<=",
            e.max_temperature_c,
            "max_temperature_c",
            "°C",
            key="temperature_c",
        ),
        _Spec("model", "G1-NVME-2", "model", "matches", e.model, "model", key="model"),
        _Spec("firmware", "G1-NVME-3", "firmware", "matches", e.firmware, "firmware", key="firmware"),
        _Spec(
            "capacity",
            "G1-NVME-4",
            "capacity_gb",
            ">=",
            e.capacity_gb,
            "capacity_gb",
            "GB",
            0.01,
            "capacity_bytes",
            1e-9,
        ),
    ]
    return [s for s in specs if s.expected is not None]


def _nvme_crit(pc: PlanContext, s: _Spec) -> Criterion:
    source = pc.source("nvme", s.field) if s.field else f"{HEALTH}: {s.metric} {s.comparator} {s.expected}"
    return Criterion(
        s.rule, s.metric, s.comparator, s.expected, unit=s.unit, tolerance=s.tolerance, source=source
    )


def nvme_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Local drive count and BOM attributes, plus SMART health on every local drive."""
    e = pc.expect.nvme
    if e is None:
        return []
    count = _nvme_crit(pc, _Spec("count", "G1-NVME-1", "nvme_count", "==", e.count, "count"))
    if e.count == 0:
        return [
            checks.planned(pc, "nvme.count", "nvme", count, None, skip="inventory declares nvme.count: 0")
        ]
    out = [checks.planned(pc, "nvme.count", "nvme", count, _nvme_count, tool="nvme")]
    for s in _nvme_specs(e):
        ev = partial(_per_nvme, s.key, s.scale)
        out.append(checks.planned(pc, f"nvme.{s.name}", "nvme", _nvme_crit(pc, s), ev, tool="nvme"))
    return out


def _fabric(col: Collected, transport: str) -> list[dict[str, Any]]:
    subs = col.facts.get("subsystems", [])
    return [s for s in subs if any(p.get("transport") == transport for p in s["paths"])]


def _nvmeof_count(transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    if (err := checks.errors_text(col, "list-subsys")) or "subsystems" not in col.facts:
        return checks.invalid(check, err or "nvme list-subsys reported nothing")
    subs = _fabric(col, transport)
    return checks.with_note(
        checks.measure(check, col, len(subs)), ", ".join(str(s["nqn"]) for s in subs) or None
    )


def _live_paths(check: PlannedCheck, col: Collected, sub: dict[str, Any]) -> Judgement:
    label = f"{sub['nqn']}.live_paths"
    if any(p.get("state") is None for p in sub["paths"]):
        return checks.part_invalid(
            check, label, "path state not reported (nvme-cli 1.x list-subsys has no State)"
        )
    live = sum(p["state"] == "live" for p in sub["paths"])
    states = ", ".join(f"{p['name']} {p['state']}" for p in sub["paths"])
    return checks.with_note(checks.measure(check, col, live, metric=label), states)


def _nvmeof_paths(transport: str, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col, "list-subsys"):
        return failed
    parts = [_live_paths(check, col, sub) for sub in _fabric(col, transport)]
    return checks.combine(check, parts, f"no NVMe-oF subsystem with a {transport} path")


def nvmeof_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Connected NVMe-oF subsystems over the BOM's transport, and live paths to each."""
    e = pc.expect.nvmeof
    if e is None:
        return []
    count = Criterion(
        "G1-NVMEOF-1",
        f"{e.transport}_subsystems",
        ">=",
        e.subsystems,
        source=pc.source("nvmeof", "subsystems"),
    )
    if e.subsystems == 0:
        return [
            checks.planned(
                pc, "nvmeof.subsystems", "nvme", count, None, skip="inventory declares nvmeof.subsystems: 0"
            )
        ]
    paths = Criterion(
        "G1-NVMEOF-2", "live_paths", ">=", e.min_live_paths, source=pc.source("nvmeof", "min_live_paths")
    )
    return [
        checks.planned(
            pc, "nvmeof.subsystems", "nvme", count, partial(_nvmeof_count, e.transport), tool="nvme"
        ),
        checks.planned(
            pc, "nvmeof.live_paths", "nvme", paths, partial(_nvmeof_paths, e.transport), tool="nvme"
        ),
    ]
