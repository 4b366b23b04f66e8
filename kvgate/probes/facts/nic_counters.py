"""The NICs' congestion and loss counters: pause frames, CNPs, discards, out-of-buffer drops.

From ``ethtool -S`` of every interface with a device (mlx5: ``rx_pause_ctrl_phy``,
``rx_discards_phy``; bnxt, ice alike) and the RDMA devices' ``hw_counters`` and ``counters``
in sysfs (``np_cnp_sent``, ``rp_cnp_handled``, ``out_of_buffer``, ``port_rcv_discards``). Each
counter is summed into its kind; a kind no counter names is absent (not zero).

>>> text = "eth0|     rx_pause_ctrl_phy: 5\\neth0|     rx_discards_phy: 2\\n"
>>> text += "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent|7\\n"
>>> parse_nic_counters(text)["totals"]
{'pause': 5, 'discard': 2, 'cnp': 7}
"""

from __future__ import annotations

from typing import Any

from kvgate.transport import Executor

COMMAND = (
    'for n in /sys/class/net/*; do [ -e "$n/device" ] || continue; i=${n##*/}; '
    'ethtool -S "$i" 2>/dev/null | sed "s/^/$i|/"; done; '
    "for c in /sys/class/infiniband/*/ports/*/hw_counters/* /sys/class/infiniband/*/ports/*/counters/*; do "
    '[ -f "$c" ] && echo "$c|$(cat "$c" 2>/dev/null)"; done; true'
)
IGNORED = ("duration", "transition", "storm", "_bytes")


def kind_of(name: str) -> str | None:
    """pause | cnp | discard | out_of_buffer, or None for a counter G4 does not judge."""
    name = name.lower()
    if any(x in name for x in IGNORED):
        return None
    for kind in ("out_of_buffer", "cnp", "pause", "discard"):
        if kind in name:
            return kind
    return None


def _counter(line: str) -> tuple[str, str, int] | None:
    """(device, counter, value) of an ``eth0|  name: 5`` or ``/sys/.../name|5`` line."""
    where, _, rest = line.partition("|")
    if where.startswith("/sys/"):
        parts = where.split("/")
        name, value, device = parts[-1], rest.strip(), f"{parts[4]}/{parts[6]}"
    else:
        name, _, value = rest.strip().partition(":")
        device = where
    try:
        return device, name.strip(), int(value.strip())
    except ValueError:
        return None


def parse_nic_counters(text: str) -> dict[str, Any]:
    """Per device and kind, and the totals per kind (only kinds some counter names)."""
    devices: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        found = _counter(line)
        kind = kind_of(found[1]) if found else None
        if found and kind:
            per = devices.setdefault(found[0], {})
            per[kind] = per.get(kind, 0) + found[2]
    totals: dict[str, int] = {}
    for per in devices.values():
        for kind, n in per.items():
            totals[kind] = totals.get(kind, 0) + n
    return {"devices": devices, "totals": totals}


def nic_counters(ex: Executor) -> dict[str, Any]:
    """The host's counters now."""
    return parse_nic_counters(ex.run(COMMAND, timeout_s=60, check=True).stdout)
