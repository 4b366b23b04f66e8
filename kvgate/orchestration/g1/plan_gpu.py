"""G1 checks on accelerators and on the PCIe links of NVMe drives, NICs and GPUs."""

from __future__ import annotations

from functools import partial
from typing import Any

from kvgate.base.criteria import Criterion, Judgement
from kvgate.configuration.inventory import parse_constraint
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import PlanContext, PlannedCheck
from kvgate.probes.facts import TOOLS, Collected


def devices_of(col: Collected, vendor: str) -> list[dict[str, Any]]:
    """The accelerators of one vendor that the GPU tools reported."""
    return [d for d in col.facts.get("devices", []) if d.get("vendor") == vendor]


def cards(devices: list[dict[str, Any]]) -> int:
    """Physical boards: an Ascend NPU id carries one or two chips; an AMD card is its partition 0."""
    if any(d["vendor"] == "ascend" for d in devices):
        return len({d["index"] for d in devices})
    return sum(1 for d in devices if d.get("partition_id") in (None, 0, "0"))


def _gpu_count(vendor: str, unit: str, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col, *TOOLS[vendor]):
        return failed
    found = devices_of(col, vendor)
    n_cards = cards(found)
    j = checks.measure(check, col, n_cards if unit == "cards" else len(found))
    return checks.with_note(j, f"{len(found)} devices on {n_cards} cards" if found else None)


def _gpu_model(vendor: str, check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col, *TOOLS[vendor]):
        return failed
    parts = [_one_model(check, col, d) for d in devices_of(col, vendor)]
    return checks.combine(check, parts, f"no {vendor} GPU found")


def _one_model(check: PlannedCheck, col: Collected, gpu: dict[str, Any]) -> Judgement:
    """A GPU whose tool printed no product name is INVALID data, never a model mismatch (FAIL)."""
    label = f"gpu{gpu['index']}.model"
    if gpu.get("model") is None:
        return checks.part_invalid(
            check, label, (gpu.get("invalid") or {}).get("model") or "model not reported"
        )
    return checks.measure(check, col, gpu["model"], metric=label)


def _gpu_driver(vendor: str, check: PlannedCheck, col: Collected) -> Judgement:
    version = col.facts.get("driver_version", {}).get(vendor)
    if version is None:
        return checks.not_reported(check, col, *TOOLS[vendor], missing="driver version not reported")
    return checks.measure(check, col, version)


def gpu_checks(pc: PlanContext) -> list[PlannedCheck]:
    """GPU count (devices or cards), model and driver version for the BOM's vendor."""
    e = pc.expect.gpus
    if e is None:
        return []
    metric = "gpu_count" if e.count_unit == "devices" else "gpu_card_count"
    count = Criterion("G1-GPU-1", metric, "==", e.count, source=pc.source("gpus", "count"))
    if e.count == 0 or e.vendor is None:
        return [checks.planned(pc, "gpu.count", "gpus", count, None, skip="inventory declares gpus.count: 0")]
    tool = " or ".join(TOOLS[e.vendor])
    ev = partial(_gpu_count, e.vendor, e.count_unit)
    out = [checks.planned(pc, "gpu.count", "gpus", count, ev, tool=tool)]
    if e.model is not None:
        crit = Criterion("G1-GPU-2", "model", "matches", e.model, source=pc.source("gpus", "model"))
        out.append(checks.planned(pc, "gpu.model", "gpus", crit, partial(_gpu_model, e.vendor), tool=tool))
    if e.driver is not None:
        tc = parse_constraint(e.driver)
        crit = Criterion(
            "G1-GPU-3", "driver_version", tc.comparator, tc.version, source=pc.source("gpus", "driver")
        )
        out.append(checks.planned(pc, "gpu.driver", "gpus", crit, partial(_gpu_driver, e.vendor), tool=tool))
    return out


def _links(check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col):
        return failed
    if not col.facts.get("measured"):
        return checks.invalid(check, "no NVMe, NIC or GPU exposes PCIe link attributes (a virtual machine?)")
    bad = [lk for lk in col.facts["links"] if lk["downgrade"]]
    notes = [f"{lk['kind']} {lk['name']} ({lk['address']}): {lk['downgrade']}" for lk in bad]
    notes = notes or [f"{col.facts['measured']} links at capable speed and width"]
    notes += [f"{lk['name']}: {lk['note']}" for lk in col.facts["links"] if lk.get("note")]
    return checks.with_note(checks.measure(check, col, len(bad)), "; ".join(notes))


def pcie_checks(pc: PlanContext) -> list[PlannedCheck]:
    """One check per host: no NVMe/NIC/GPU link trained below its capability."""
    if not pc.expect.pcie_full_link:
        return []
    crit = Criterion("G1-PCIE-1", "downgraded_links", "==", 0, source=pc.source("pcie_full_link"))
    return [checks.planned(pc, "pcie.links", "pcie", crit, _links)]
