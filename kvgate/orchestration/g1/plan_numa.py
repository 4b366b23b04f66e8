"""G1 checks on NUMA placement: the node count, a known node for every storage NIC and
accelerator, and each engine GPU group sharing a node with a NIC that carries storage traffic.

A GPU group is one engine instance's visible devices (HIP_VISIBLE_DEVICES and the like,
`engines.<name>.instances`); index i is the i-th accelerator in PCI address order, the
order HIP and CUDA (CUDA_DEVICE_ORDER=PCI_BUS_ID) use for whole cards.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from kvgate.base.criteria import Criterion, Judgement
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import PlanContext, PlannedCheck
from kvgate.probes.facts import Collected

VISIBLE = (
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
    "ASCEND_VISIBLE_DEVICES",
)
Group = tuple[str, str | None]  # label, the visible-devices value (None: every accelerator)


def _storage_nics(col: Collected, patterns: tuple[str, ...]) -> list[dict[str, Any]]:
    return [n for n in col.facts.get("nics", []) if any(re.search(p, n["name"]) for p in patterns)]


def _nodes(check: PlannedCheck, col: Collected) -> Judgement:
    if col.facts.get("nodes") is None:
        return checks.not_reported(check, col, missing="no /sys/devices/system/node (kernel without NUMA?)")
    return checks.measure(check, col, col.facts["nodes"])


def _devices(patterns: tuple[str, ...], check: PlannedCheck, col: Collected) -> Judgement:
    if failed := checks.probe_error(check, col):
        return failed
    devs = [(n["name"], n["numa_node"]) for n in _storage_nics(col, patterns)]
    devs += [(f"{a['vendor']} {a['pci_address']}", a["numa_node"]) for a in col.facts.get("accelerators", [])]
    unknown = [name for name, node in devs if node is None]
    listing = "; ".join(f"{name} node {'?' if node is None else node}" for name, node in devs)
    return checks.with_note(
        checks.measure(check, col, len(unknown)), listing or "no storage NIC or accelerator found"
    )


def _indices(value: str | None, count: int) -> list[int] | None:
    if value is None:
        return list(range(count))
    cells = [c.strip() for c in value.split(",") if c.strip()]
    return [int(c) for c in cells] if all(c.isdigit() for c in cells) else None


def _group(label: str, value: str | None, nic_nodes: set[int], col: Collected) -> tuple[bool, str] | str:
    """(remote, description) for one GPU group, or why it cannot be placed."""
    accs = col.facts.get("accelerators", [])
    idx = _indices(value, len(accs))
    if idx is None or not idx or any(i >= len(accs) for i in idx):
        return f"{label}: devices {value!r} do not map onto the {len(accs)} accelerators in PCI order"
    nodes = sorted({accs[i]["numa_node"] for i in idx}, key=str)
    remote = any(n is None or n not in nic_nodes for n in nodes)
    return remote, f"{label}: GPUs {idx} on node {'/'.join(map(str, nodes))}{' (remote)' if remote else ''}"


def _groups(
    groups: tuple[Group, ...], patterns: tuple[str, ...], check: PlannedCheck, col: Collected
) -> Judgement:
    if failed := checks.probe_error(check, col):
        return failed
    nic_nodes = {n["numa_node"] for n in _storage_nics(col, patterns) if n["numa_node"] is not None}
    if not nic_nodes:
        return checks.invalid(check, f"no storage NIC matching {list(patterns)} with a known NUMA node")
    placed = [_group(label, value, nic_nodes, col) for label, value in groups]
    if unplaced := [p for p in placed if isinstance(p, str)]:
        return checks.invalid(check, "; ".join(unplaced) + " (UUIDs or partitions?)")
    remote = sum(1 for p in placed if isinstance(p, tuple) and p[0])
    texts = [p[1] for p in placed if isinstance(p, tuple)]
    note = f"storage NICs on node {'/'.join(map(str, sorted(nic_nodes)))}; " + "; ".join(texts)
    return checks.with_note(checks.measure(check, col, remote), note)


def gpu_groups(pc: PlanContext) -> tuple[Group, ...]:
    """Every engine instance's GPU group on this host, labelled deployment#instance."""
    out = []
    for name in pc.inventory.engines:
        if pc.host not in pc.inventory.engine_hosts(name):
            continue
        for i, env in enumerate(pc.inventory.engines[name].instance_envs):
            value = next((env[k] for k in VISIBLE if k in env), None)
            out.append((f"{name}#{i}", value))
    return tuple(out)


def numa_checks(pc: PlanContext) -> list[PlannedCheck]:
    """Node count, known nodes for storage NICs and accelerators, engine GPU groups near a storage NIC."""
    e = pc.expect.numa
    if e is None:
        return []
    patterns = tuple(n.name for n in pc.expect.nics if n.rdma)
    out = []
    if e.nodes is not None:
        crit = Criterion("G1-NUMA-1", "numa_nodes", "==", e.nodes, source=pc.source("numa", "nodes"))
        out.append(checks.planned(pc, "numa.nodes", "numa", crit, _nodes))
    crit = Criterion("G1-NUMA-2", "devices_without_numa_node", "==", 0, source=pc.source("numa"))
    out.append(checks.planned(pc, "numa.devices", "numa", crit, partial(_devices, patterns)))
    crit = Criterion(
        "G1-NUMA-3",
        "remote_gpu_groups",
        "<=",
        e.max_remote_gpu_groups,
        source=pc.source("numa", "max_remote_gpu_groups"),
    )
    groups = gpu_groups(pc)
    skip = None if groups else "no engine deployment runs on this host"
    skip = skip or (None if patterns else "no BOM NIC has rdma: true")
    out.append(
        checks.planned(pc, "numa.gpu_groups", "numa", crit, partial(_groups, groups, patterns), skip=skip)
    )
    return out
