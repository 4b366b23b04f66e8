"""PCIe link facts from sysfs: current vs maximum link speed and width (LnkSta vs LnkCap).

Covers NVMe controllers (/sys/class/nvme/*/device), network interfaces
(/sys/class/net/*/device) and GPUs/accelerators (PCI class 0x0300, 0x0302, 0x0380 — AMD
Instinct MI200 lists as a 'Display controller' —, 0x1200).
GPUs lower their link *speed* when idle to save power, so for GPUs only a
narrower *width* counts as a downgrade; their idle speed is recorded as a note.

>>> parse_link_speed("8.0 GT/s PCIe"), parse_link_speed("Unknown")
(8.0, None)
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, collect_one, int_or_none, split_rows
from kvgate.transport import Executor

TOOL = "pcie sysfs probe"
# kind|name|pci address|current speed|current width|max speed|max width  ('-' when absent)
PROBE = (
    'link() { d=$(readlink -f "$2"); a=${d##*/}; '
    'if [ -e "$d/max_link_width" ]; then '
    'echo "$1|$3|$a|$(cat "$d/current_link_speed" 2>/dev/null)|$(cat "$d/current_link_width" 2>/dev/null)|'
    '$(cat "$d/max_link_speed" 2>/dev/null)|$(cat "$d/max_link_width" 2>/dev/null)"; '
    'else echo "$1|$3|$a|-|-|-|-"; fi; }; '
    'for c in /sys/class/nvme/*; do [ -e "$c/device" ] && link nvme "$c/device" "${c##*/}"; done; '
    'for n in /sys/class/net/*; do [ -e "$n/device" ] && link nic "$n/device" "${n##*/}"; done; '
    'for p in /sys/bus/pci/devices/*; do [ -e "$p/class" ] || continue; '
    'case $(cat "$p/class") in 0x0300*|0x0302*|0x0380*|0x1200*) link gpu "$p" "${p##*/}";; esac; done; true'
)


def parse_link_speed(text: str) -> float | None:
    """GT/s from sysfs: '16.0 GT/s PCIe' (kernel ≥ 5.x), '8 GT/s' (older), 'Unknown' -> None."""
    m = re.match(r"\s*(\d+(?:\.\d+)?)\s*GT/s", text)
    return float(m[1]) if m else None


def _downgrade(kind: str, link: dict[str, Any]) -> str | None:
    """Why the link trained below its capability, or None when it did not."""
    reasons = []
    cur_w, max_w = link["current_width"], link["max_width"]
    if cur_w is not None and max_w is not None and cur_w < max_w:
        reasons.append(f"x{cur_w} < x{max_w}")
    cur_s, max_s = link["current_speed_gts"], link["max_speed_gts"]
    if kind != "gpu" and cur_s is not None and max_s is not None and cur_s < max_s:
        reasons.append(f"{cur_s:g} < {max_s:g} GT/s")
    return ", ".join(reasons) or None


def _link(row: list[str]) -> dict[str, Any]:
    kind, name, address, cur_s, cur_w, max_s, max_w = row
    link: dict[str, Any] = {
        "kind": kind,
        "name": name,
        "address": address,
        "current_speed_gts": parse_link_speed(cur_s),
        "current_width": int_or_none(cur_w),
        "max_speed_gts": parse_link_speed(max_s),
        "max_width": int_or_none(max_w),
    }
    link["measured"] = link["max_width"] is not None and link["current_width"] is not None
    link["downgrade"] = _downgrade(kind, link) if link["measured"] else None
    cur, top = link["current_speed_gts"], link["max_speed_gts"]
    slow = cur is not None and top is not None and cur < top
    link["note"] = f"idle GPU link at {cur:g} of {top:g} GT/s" if kind == "gpu" and slow else None
    return link


def parse_pcie_links(text: str) -> dict[str, Any]:
    """Every probed link, which ones were measurable, and which trained below capability."""
    links = [_link(row) for row in split_rows(text, 7, TOOL)]
    downgraded = [f"{lk['kind']} {lk['name']} ({lk['address']})" for lk in links if lk["downgrade"]]
    return {"links": links, "downgraded": downgraded, "measured": sum(lk["measured"] for lk in links)}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Read link attributes of NVMe, NIC and GPU PCI functions from sysfs."""
    del ctx  # nothing host-specific to pass
    return collect_one(ex, "links", parse_pcie_links, PROBE, timeout_s=30)
