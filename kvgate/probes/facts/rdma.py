"""RDMA facts from /sys/class/infiniband: port state, link layer (Ethernet = RoCE), GIDs, netdevs.

A port's netdevs are its PCI function's interfaces and those its GIDs are bound to: Soft-RoCE
(rdma_rxe) has no PCI function, only the GIDs of the interface it was added on.

>>> parse_rdma("mlx5_0|1|4: ACTIVE|5: LinkUp|Ethernet|100 Gb/sec (4X EDR)|2|ens1f0np0,\\n")[
...     "ports"][0]["roce"]
True
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, collect_one, int_or_none, split_rows
from kvgate.transport import Executor

TOOL = "rdma sysfs probe"
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
# device|port|state|phys_state|link_layer|rate|non-zero GIDs|netdevs (comma-terminated, sorted)
PROBE = (
    'for p in /sys/class/infiniband/*/ports/*; do [ -d "$p" ] || continue; '
    'd=$(basename "$(dirname "$(dirname "$p")")"); '
    f'g=$(cat "$p"/gids/* 2>/dev/null | grep -vc "^{ZERO_GID}$"); '
    'echo "$d|${p##*/}|$(cat "$p/state" 2>/dev/null)|$(cat "$p/phys_state" 2>/dev/null)|'
    '$(cat "$p/link_layer" 2>/dev/null)|$(cat "$p/rate" 2>/dev/null)|$g|'
    '$({ ls "/sys/class/infiniband/$d/device/net"; cat "$p"/gid_attrs/ndevs/*; } 2>/dev/null | sort -u | '
    'tr "\\n" ",")"; done'
)


def _state(text: str) -> str | None:
    """'4: ACTIVE' -> 'ACTIVE'; '5: LinkUp' -> 'LinkUp'."""
    return text.split(":", 1)[-1].strip() or None


def _rate_gbps(text: str) -> float | None:
    m = re.match(r"\s*(\d+(?:\.\d+)?)\s*Gb/sec", text)
    return float(m[1]) if m else None


def _port(row: list[str]) -> dict[str, Any]:
    device, port, state, phys, layer, rate, gids, nets = row
    return {
        "device": device,
        "port": int_or_none(port),
        "state": _state(state),
        "phys_state": _state(phys),
        "link_layer": layer or None,
        "roce": layer == "Ethernet",
        "rate_gbps": _rate_gbps(rate),
        "gids": int_or_none(gids) or 0,
        "netdevs": [n for n in nets.split(",") if n],
    }


def parse_rdma(text: str) -> dict[str, Any]:
    """Every RDMA port with its state and the network interfaces of its PCI function."""
    return {"ports": [_port(row) for row in split_rows(text, 8, TOOL)]}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Read RDMA port attributes from sysfs (an empty list when the host has none)."""
    del ctx  # nothing host-specific to pass
    return collect_one(ex, "ports", parse_rdma, PROBE, timeout_s=30)
