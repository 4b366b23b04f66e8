"""The G1 arrival gate plan: one PlannedCheck per (host, check), from the inventory alone.

Only what the inventory expects is planned (no GPU check when `gpus` is not set);
NVMe health, NIC link state and, when `pcie_full_link` is true, PCIe link width and
speed are planned wherever the family applies. A check is evaluated later against
the host's collected facts:

>>> from kvgate.configuration.gateconfig import in_memory
>>> from kvgate.configuration.inventory import Inventory
>>> inv = Inventory.model_validate({"site": "s", "hosts": {"h": {"expect": {"cpu": {"cores": 64}}}}})
>>> [c.check for c in plan(in_memory(inv))]
['cpu.cores', 'pcie.links']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvgate.base.units import GiB
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import Inventory
from kvgate.orchestration.g1.checks import PlanContext, PlannedCheck
from kvgate.orchestration.g1.plan_accel import accel_checks
from kvgate.orchestration.g1.plan_fabric import roce_checks
from kvgate.orchestration.g1.plan_gpu import gpu_checks, pcie_checks
from kvgate.orchestration.g1.plan_host import clock_checks, nic_checks, tool_checks, volume_checks
from kvgate.orchestration.g1.plan_hw import cpu_checks, memory_checks, nvme_checks, nvmeof_checks, os_checks
from kvgate.orchestration.g1.plan_numa import numa_checks
from kvgate.orchestration.g1.plan_nvmeof import nvmeof_quality_checks
from kvgate.orchestration.g1.plan_tuning import tuning_checks
from kvgate.probes.facts import FABRIC, Collected, HostFacts

PLANNERS: tuple[
    Callable[[PlanContext], list[PlannedCheck]], ...
] = (  # servers, fabric, array, accelerators, software
    cpu_checks,
    memory_checks,
    os_checks,
    nvme_checks,
    pcie_checks,
    numa_checks,
    nic_checks,
    roce_checks,
    nvmeof_checks,
    nvmeof_quality_checks,
    volume_checks,
    gpu_checks,
    accel_checks,
    tuning_checks,
    clock_checks,
    tool_checks,
)


def plan(config: GateConfig) -> list[PlannedCheck]:
    """Every G1 check of every host, in inventory order."""
    inventory = config.inventory.inventory
    return [
        check
        for host in inventory.hosts
        for planner in PLANNERS
        for check in planner(PlanContext(inventory, host))
    ]


def tools_wanted(inventory: Inventory, host: str) -> tuple[str, ...]:
    """The BOM's tool names for `HostContext.tools` (their versions are collected)."""
    return tuple(inventory.expectations(host).tools)


def _gib(n: int | None) -> float | None:
    return round(n / GiB, 1) if n is not None else None


def _nvme_line(d: dict[str, Any]) -> str:
    size = f"{d['capacity_bytes'] / 1e12:.2f} TB" if d.get("capacity_bytes") else "? TB"
    return f"{d['name']} {d.get('model')} fw {d.get('firmware')} {size} ({d.get('transport') or 'unknown'})"


def _nic_line(n: dict[str, Any]) -> str:
    speed = f"{n['speed_mbps']} Mb/s" if n.get("speed_mbps") else "speed n/a"
    return f"{n['name']} {n.get('operstate')} {speed} mtu {n.get('mtu')} {n.get('driver') or ''}".rstrip()


def _gpu_line(g: dict[str, Any]) -> str:
    line = (
        f"{g['vendor']} {g.get('model')} {g.get('pci_address') or ''} {_gib(g.get('memory_total_bytes'))} GiB"
    )
    return line + (
        f" {g['compute_partition']}/{g.get('memory_partition')}" if g.get("compute_partition") else ""
    )


def _path_line(c: dict[str, Any]) -> str:
    ana = "/".join(sorted({p["ana_state"] for p in c["paths"] if p["ana_state"]})) or "no ANA"
    return f"{c['name']} {c['transport']} {c['address']} {c['state']} {ana}"


def _write_cache_lines(nvmeof: dict[str, Any]) -> list[str]:
    """'nvme0n1 write back, FUA (nqn…)': each array namespace's cache as the array reports it."""
    fabric = {c["nqn"] for c in nvmeof.get("controllers", []) if c["transport"] in FABRIC}
    lines = []
    for s in nvmeof.get("subsystems", []):
        for ns in s.get("namespaces", []) if s["nqn"] in fabric else []:
            fua = {True: ", FUA", False: ", no FUA"}.get(ns["fua"], "")
            lines.append(f"{ns['name']} {ns['write_cache'] or 'cache not reported'}{fua} ({s['nqn']})")
    return lines


def manifest(facts: HostFacts) -> dict[str, Any]:
    """A flat summary of one host for the report's environment manifest."""
    f = {name: col.facts for name, col in facts.families.items()}
    cpu, mem, os_ = f.get("cpu", {}), f.get("memory", {}), f.get("os", {})
    return {
        "host": facts.host,
        "cpu_model": cpu.get("model"),
        "cpu_sockets": cpu.get("sockets"),
        "cpu_cores": cpu.get("cores"),
        "cpu_threads": cpu.get("threads"),
        "mem_total_gib": _gib(mem.get("mem_total_bytes")),
        "os": os_.get("pretty_name"),
        "kernel": os_.get("kernel"),
        "nvme_devices": [_nvme_line(d) for d in f.get("nvme", {}).get("devices", [])],
        "nvmeof_subsystems": [s.get("nqn") for s in f.get("nvme", {}).get("subsystems", [])],
        "nvmeof_paths": [_path_line(c) for c in f.get("nvmeof", {}).get("controllers", []) if c["paths"]],
        "array_write_cache": _write_cache_lines(f.get("nvmeof", {})),
        "nics": [_nic_line(n) for n in f.get("nics", {}).get("interfaces", []) if not n.get("virtual")],
        "rdma_ports": [
            f"{p['device']}/{p['port']} {p['state']} {p['link_layer']}"
            for p in f.get("rdma", {}).get("ports", [])
        ],
        "gpus": [_gpu_line(g) for g in f.get("gpus", {}).get("devices", [])],
        "gpu_drivers": f.get("gpus", {}).get("driver_version", {}),
        "clock": _clock_line(facts.families.get("clock")),
        "tools": {t: v.get("version") for t, v in f.get("tools", {}).get("tools", {}).items()},
        "missing_tools": sorted({t for col in facts.families.values() for t in col.missing_tools}),
    }


def _clock_line(col: Collected | None) -> str | None:
    """'chrony offset 0.042 ms', 'timedatectl: synchronised (no offset)', or why it was not read."""
    if col is None:
        return None
    clock = col.facts
    if clock.get("offset_ms") is not None:
        return f"{clock['source']} offset {clock['offset_ms']} ms"
    if clock:
        return f"{clock['source']}: {'' if clock.get('synchronised') else 'not '}synchronised (no offset)"
    why = [f"no {t}" for t in col.missing_tools] + [
        f"{k}: {e.splitlines()[0]}" for k, e in col.errors.items()
    ]
    return "not read: " + "; ".join(why)


__all__ = ["PlannedCheck", "manifest", "plan", "tools_wanted"]
