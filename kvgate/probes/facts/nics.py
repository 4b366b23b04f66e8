"""Network interface facts from /sys/class/net: state, speed, MTU, driver, virtual or not.

Loopback and virtual interfaces (bridges, bonds' members stay physical, ifb, veth)
are recorded with `virtual: true` so checks can ignore them without losing them.

>>> parse_nics("eth0|up|25000|9000|mlx5_core|1|/sys/devices/pci0000:00/0000:3b:00.0/net/eth0\\n")[
...     "interfaces"][0]["speed_mbps"]
25000
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, collect_one, int_or_none, split_rows
from kvgate.transport import Executor

TOOL = "nic sysfs probe"
ARPHRD_LOOPBACK = 772
PCI_ADDRESS = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
UNKNOWN_SPEEDS = (-1, 0, 4294967295, 65535)
# name|operstate|speed|mtu|driver|type|resolved sysfs path
PROBE = (
    'for n in /sys/class/net/*; do [ -e "$n" ] || continue; drv=$(readlink "$n/device/driver" 2>/dev/null); '
    'echo "${n##*/}|$(cat "$n/operstate" 2>/dev/null)|$(cat "$n/speed" 2>/dev/null)|'
    '$(cat "$n/mtu" 2>/dev/null)|${drv##*/}|$(cat "$n/type" 2>/dev/null)|$(readlink -f "$n")"; done'
)


def _speed(text: str) -> int | None:
    """Mb/s; sysfs reports -1 (or errors) for a link that is down or has no notion of speed."""
    value = int_or_none(text)
    return None if value is None or value in UNKNOWN_SPEEDS else value


def _interface(row: list[str]) -> dict[str, Any]:
    name, operstate, speed, mtu, driver, arptype, path = row
    pci = next((p for p in reversed(path.split("/")) if PCI_ADDRESS.fullmatch(p)), None)
    return {
        "name": name,
        "operstate": operstate or None,
        "speed_mbps": _speed(speed),
        "mtu": int_or_none(mtu),
        "driver": driver or None,
        "virtual": "/devices/virtual/" in path or int_or_none(arptype) == ARPHRD_LOOPBACK,
        "pci_address": pci,
        "sysfs_path": path,
    }


def parse_nics(text: str) -> dict[str, Any]:
    """Every interface under /sys/class/net, physical and virtual."""
    return {"interfaces": [_interface(row) for row in split_rows(text, 7, TOOL)]}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Read interface attributes from sysfs."""
    del ctx  # nothing host-specific to pass
    return collect_one(ex, "interfaces", parse_nics, PROBE, timeout_s=30)
