"""G1 checks on accelerator detail: memory per device, AMD firmware, partition modes and
XGMI links (amd-smi), and the health npu-smi reports for every Ascend chip."""

from __future__ import annotations

from functools import partial
from typing import Any

from kvgate.base.criteria import Criterion, Judgement
from kvgate.base.units import GiB
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import HEALTH, PlanContext, PlannedCheck
from kvgate.orchestration.g1.plan_gpu import devices_of
from kvgate.probes.facts import TOOLS, Collected

AMD_ONLY = "amd-smi"  # partition modes, firmware and XGMI links come from amd-smi alone


def _label(dev: dict[str, Any], metric: str) -> str:
    chip = f".chip{dev['chip']}" if dev.get("chip") is not None else ""
    return f"gpu{dev['index']}{chip}.{metric}"


def _per_device(vendor: str, key: str, scale: float | None, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col, *TOOLS[vendor]):
        return failed
    source = col.facts.get("source", {}).get(vendor)
    if vendor == "amd" and key != "memory_total_bytes" and source != AMD_ONLY:
        return checks.invalid(
            check, f"{key} is reported by amd-smi only; this host answered with {source or 'nothing'}"
        )
    parts = []
    for dev in devices_of(col, vendor):
        label = _label(dev, check.criterion.metric)
        value = dev.get(key)
        if value is None:
            parts.append(checks.part_invalid(check, label, f"{key} not reported"))
        else:
            parts.append(
                checks.measure(check, col, round(value * scale, 1) if scale else value, metric=label)
            )
    return checks.combine(check, parts, f"no {vendor} device found")


def _xgmi(check: PlannedCheck, col: Collected) -> Judgement:
    """Every pair of AMD GPUs joined by an enabled XGMI link; the others are listed."""
    links = col.facts.get("amd_links")
    if links is None:
        probes = ("amd-smi topology", *TOOLS["amd"])
        return checks.not_reported(check, col, *probes, missing="amd-smi topology not read")
    # links join cards; the partitions of one card (CPX, DPX) share its die and have none between them
    gpus = sorted({d["index"] for d in devices_of(col, "amd") if d.get("partition_id") in (None, 0, "0")})
    seen: dict[tuple[int, int], dict[str, Any]] = {}
    for x in sorted(links, key=_xgmi_up, reverse=True):  # a pair is as good as its worse direction
        seen[(min(x["gpu"], x["peer"]), max(x["gpu"], x["peer"]))] = x
    pairs = [(a, b) for i, a in enumerate(gpus) for b in gpus[i + 1 :]]
    bad = [_pair_text(a, b, seen.get((a, b))) for a, b in pairs if not _xgmi_up(seen.get((a, b)))]
    j = checks.measure(check, col, len(bad))
    return checks.with_note(j, "; ".join(bad) or f"{len(gpus)} GPUs, every pair linked by XGMI")


def _xgmi_up(link: dict[str, Any] | None) -> bool:
    return link is not None and link.get("type") == "XGMI" and link.get("status") in (None, "ENABLED")


def _pair_text(a: int, b: int, link: dict[str, Any] | None) -> str:
    if link is None:
        return f"gpu{a}-gpu{b}: no link reported"
    return f"gpu{a}-gpu{b}: {link.get('type')} {link.get('status') or ''}".rstrip()


def _health(check: PlannedCheck, col: Collected) -> Judgement:
    """Every Ascend chip in state OK, as npu-smi prints it (Alarm, Warning, Critical fail)."""
    if failed := checks.probe_error(check, col, *TOOLS["ascend"]):
        return failed
    parts = [
        checks.measure(check, col, d.get("health"), metric=_label(d, "health"))
        for d in devices_of(col, "ascend")
    ]
    return checks.combine(check, parts, "no Ascend NPU found")


def _crit(
    pc: PlanContext, rule: str, spec: tuple[str, str, Any], field: str | None, unit: str = ""
) -> Criterion:
    metric, comparator, expected = spec
    source = pc.source("gpus", field) if field else f"{HEALTH}: {metric} {comparator} {expected}"
    return Criterion(rule, metric, comparator, expected, unit=unit, source=source)


def accel_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Per device: memory, firmware, partition modes; XGMI pairs (AMD); chip health (Ascend)."""
    e = pc.expect.gpus
    if e is None or e.vendor is None or e.count == 0:
        return []
    tool, v = " or ".join(TOOLS[e.vendor]), e.vendor
    specs = [  # check, rule, metric, comparator, expected, inventory field, fact key, scale, unit
        (
            "memory",
            "G1-GPU-4",
            "memory_gib",
            ">=",
            e.min_memory_gib,
            "min_memory_gib",
            "memory_total_bytes",
            1 / GiB,
            "GiB",
        ),
        ("firmware", "G1-GPU-5", "firmware", "matches", e.firmware, "firmware", "firmware", None, ""),
        (
            "compute_partition",
            "G1-GPU-6",
            "compute_partition",
            "==",
            e.compute_partition,
            "compute_partition",
            "compute_partition",
            None,
            "",
        ),
        (
            "memory_partition",
            "G1-GPU-7",
            "memory_partition",
            "==",
            e.memory_partition,
            "memory_partition",
            "memory_partition",
            None,
            "",
        ),
    ]
    out = []
    for name, rule, metric, comparator, expected, field, key, scale, unit in specs:
        if expected is not None:
            crit = _crit(pc, rule, (metric, comparator, expected), field, unit)
            out.append(
                checks.planned(
                    pc, f"gpu.{name}", "gpus", crit, partial(_per_device, v, key, scale), tool=tool
                )
            )
    if e.xgmi and v == "amd":
        crit = _crit(pc, "G1-GPU-8", ("gpu_pairs_without_xgmi", "==", 0), "xgmi")
        out.append(checks.planned(pc, "gpu.xgmi", "gpus", crit, _xgmi, tool=tool))
    if v == "ascend":
        crit = _crit(pc, "G1-GPU-9", ("health", "==", "OK"), None)
        out.append(checks.planned(pc, "gpu.health", "gpus", crit, _health, tool=tool))
    return out
