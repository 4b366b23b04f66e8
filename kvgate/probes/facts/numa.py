"""NUMA placement from sysfs: the host's nodes, each network interface's node and each
accelerator's node (PCI functions of AMD, NVIDIA and Huawei with a display or
processing-accelerator class; a BMC's VGA is not one of them).

A device's `numa_node` of -1 means the firmware gave no affinity: on a one-node host
that is node 0; on a multi-node host it is unknown. Accelerators are listed in PCI
address order, the order HIP and CUDA (with CUDA_DEVICE_ORDER=PCI_BUS_ID) number them.

>>> parse_numa("nodes|2\\nnet|ens1f0np0|0000:41:00.0|1\\nacc|0000:05:00.0|0x1002|0x038000|0\\n")["nics"]
[{'name': 'ens1f0np0', 'pci_address': '0000:41:00.0', 'numa_node': 1}]
"""

from __future__ import annotations

from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, collect_one, int_or_none
from kvgate.transport import Executor

ACCELERATOR_VENDORS = {"0x1002": "amd", "0x10de": "nvidia", "0x19e5": "ascend"}
# nodes|<count> · net|name|pci|node · acc|pci|vendor|class|node
PROBE = (
    'echo "nodes|$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)"; '
    'for n in /sys/class/net/*; do [ -e "$n/device/numa_node" ] || continue; d=$(readlink -f "$n/device"); '
    'echo "net|${n##*/}|${d##*/}|$(cat "$n/device/numa_node")"; done; '
    'for p in /sys/bus/pci/devices/*; do c=$(cat "$p/class" 2>/dev/null); '
    'case "$c" in 0x03*|0x12*) ;; *) continue;; esac; '
    'v=$(cat "$p/vendor"); case "$v" in 0x1002|0x10de|0x19e5) '
    'echo "acc|${p##*/}|$v|$c|$(cat "$p/numa_node" 2>/dev/null)";; esac; done; true'
)
FIELDS = {"nodes": 2, "net": 4, "acc": 5}


def _rows(text: str) -> list[list[str]]:
    rows = []
    for line in filter(str.strip, text.splitlines()):
        cells = [c.strip() for c in line.split("|")]
        if FIELDS.get(cells[0]) != len(cells):
            raise ParseError(
                "numa sysfs probe", "nodes|n, net|name|pci|node and acc|pci|vendor|class|node lines", line
            )
        rows.append(cells)
    return rows


def _node(text: str, nodes: int | None) -> int | None:
    value = int_or_none(text)
    if value is None or value < 0:
        return 0 if nodes == 1 else None  # -1: no affinity given; only a one-node host makes that node 0
    return value


def parse_numa(text: str) -> dict[str, Any]:
    """Node count, interfaces with a PCI device and accelerators (PCI order) with their nodes."""
    rows = _rows(text)
    nodes = next((int_or_none(r[1]) for r in rows if r[0] == "nodes"), None)
    nodes = nodes or None  # a kernel without NUMA has no node directories
    nics = [
        {"name": r[1], "pci_address": r[2], "numa_node": _node(r[3], nodes)} for r in rows if r[0] == "net"
    ]
    accs = sorted(
        (
            {
                "pci_address": r[1],
                "vendor": ACCELERATOR_VENDORS.get(r[2], r[2]),
                "numa_node": _node(r[4], nodes),
            }
            for r in rows
            if r[0] == "acc"
        ),
        key=lambda a: str(a["pci_address"]),
    )
    return {"nodes": nodes, "nics": nics, "accelerators": accs}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Read NUMA placement from sysfs."""
    del ctx  # nothing host-specific to pass
    return collect_one(ex, "sysfs", parse_numa, PROBE, timeout_s=30)
