"""RoCEv2 facts per storage interface: PFC and trust, ECN/DCQCN, GIDs, the rdma_cm mode, the RoCE MTU.

Sources: a sysfs probe (GID table with each GID's type and netdev, the ECN switches
of MLNX_OFED's `/sys/class/net/<if>/ecn/roce_{np,rp}/enable/<prio>`), rdma_cm's
configfs `default_roce_mode`, `mlnx_qos -i <if>` (or iproute2's `dcb pfc show` for PFC
on inbox drivers) and `ibv_devinfo` (the port's active RoCE MTU, which sysfs lacks).

>>> parse_mlnx_qos("Priority trust state: dscp\\nPFC configuration:\\n"
...                "        priority    0   1   2   3   4   5   6   7\\n"
...                "        enabled     0   0   0   1   0   0   0   0\\n")["pfc"][3]
True
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, has_tool, int_or_none, run_parsed
from kvgate.transport import Executor

ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
IPV4_MAPPED = "0000:0000:0000:0000:0000:ffff:"
# port|dev|port|link_layer|netdev · gid|dev|port|index|gid|type|netdev · ecn|netdev|roce_np|prio|0/1
PROBE = (
    'for p in /sys/class/infiniband/*/ports/*; do [ -d "$p" ] || continue; d=${p%%/ports/*}; d=${d##*/}; '
    'n=${p##*/}; a="$p/gid_attrs"; '
    'echo "port|$d|$n|$(cat "$p/link_layer" 2>/dev/null)|$(cat "$a/ndevs/0" 2>/dev/null)"; '
    'for g in "$p"/gids/*; do i=${g##*/}; v=$(cat "$g" 2>/dev/null); '
    f'case "$v" in ""|{ZERO_GID}) continue;; esac; '
    'echo "gid|$d|$n|$i|$v|$(cat "$a/types/$i" 2>/dev/null)|$(cat "$a/ndevs/$i" 2>/dev/null)"; '
    "done; done; "
    "for e in /sys/class/net/*/ecn/roce_np/enable/* /sys/class/net/*/ecn/roce_rp/enable/*; do "
    '[ -e "$e" ] || continue; r=${e#/sys/class/net/}; '
    'echo "ecn|${r%%%%/*}|$(echo "$r" | cut -d/ -f3)|${e##*/}|$(cat "$e" 2>/dev/null)"; done; true'
)
# cm|dev|port|mode ('-' unknown). rdma_cm shows a device's mode only once its configfs directory
# exists; creating it (as cma_roce_mode does) and removing it again changes no setting.
CM_PROBE = (
    'for d in /sys/class/infiniband/*; do [ -d "$d" ] || continue; n=${d##*/}; '
    "c=/sys/kernel/config/rdma_cm/$n; made=; "
    'if [ ! -d "$c" ] && [ -d /sys/kernel/config/rdma_cm ]; then mkdir "$c" 2>/dev/null && made=1; fi; '
    'for p in "$d"/ports/*; do m=$(cat "$c/ports/${p##*/}/default_roce_mode" 2>/dev/null); '
    'echo "cm|$n|${p##*/}|${m:--}"; done; [ -n "$made" ] && rmdir "$c"; done; true'
)
FIELDS = {"port": 5, "gid": 7, "ecn": 5, "cm": 4}


def _rows(text: str, tool: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if not line.strip():
            continue
        if FIELDS.get(cells[0]) != len(cells):
            raise ParseError(
                tool, "kind|... lines with " + ", ".join(f"{k}: {n}" for k, n in FIELDS.items()), line
            )
        rows.append(cells)
    return rows


def ipv4_of(gid: str) -> str | None:
    """The IPv4 address inside an IPv4-mapped GID (::ffff:a.b.c.d), else None."""
    if not gid.lower().startswith(IPV4_MAPPED):
        return None
    hexes = gid.lower().removeprefix(IPV4_MAPPED).split(":")
    if len(hexes) != 2 or not all(re.fullmatch(r"[0-9a-f]{4}", h) for h in hexes):
        return None
    raw = bytes.fromhex("".join(hexes))
    return ".".join(str(b) for b in raw)


def _port(row: list[str]) -> dict[str, Any]:
    _, dev, port, layer, netdev = row
    return {"device": dev, "port": int_or_none(port), "link_layer": layer or None, "netdev": netdev or None}


def _gid(row: list[str]) -> dict[str, Any]:
    _, dev, port, index, gid, kind, netdev = row
    return {
        "device": dev,
        "port": int_or_none(port),
        "index": int_or_none(index),
        "gid": gid,
        "type": kind or None,  # "RoCE v2", "IB/RoCE v1" (drivers/infiniband/core/cache.c)
        "netdev": netdev or None,
        "ipv4": ipv4_of(gid),
    }


def parse_probe(text: str) -> dict[str, Any]:
    """RDMA ports with their GIDs, and the ECN switches per netdev, from PROBE."""
    rows = _rows(text, "roce sysfs probe")
    ecn: dict[str, dict[str, dict[str, bool]]] = {}
    for _, netdev, side, prio, value in (r for r in rows if r[0] == "ecn"):
        ecn.setdefault(netdev, {}).setdefault(side.removeprefix("roce_"), {})[prio] = value == "1"
    return {
        "ports": [_port(r) for r in rows if r[0] == "port"],
        "gids": [_gid(r) for r in rows if r[0] == "gid"],
        "ecn": ecn,
    }


def parse_cm(text: str) -> dict[str, str | None]:
    """'<dev>/<port>' -> rdma_cm's default RoCE mode ('RoCE v2', 'IB/RoCE v1'; None unknown)."""
    return {f"{r[1]}/{r[2]}": (None if r[3] == "-" else r[3]) for r in _rows(text, "rdma_cm configfs probe")}


def parse_mlnx_qos(text: str) -> dict[str, Any]:
    """Trust state and per-priority PFC from `mlnx_qos -i <if>` (MLNX_OFED / mlnx-tools)."""
    trust = re.search(r"Priority trust state:\s*(\w+)", text)
    enabled = re.search(r"^\s*enabled((?:\s+[01]){8})\s*$", text, re.MULTILINE)
    if enabled is None:
        raise ParseError("mlnx_qos", "a 'PFC configuration' block with an 'enabled' row of 8 flags", text)
    return {
        "tool": "mlnx_qos",
        "trust": trust[1] if trust else None,
        "pfc": [flag == "1" for flag in enabled[1].split()],
    }


def parse_dcb_pfc(text: str) -> dict[str, Any]:
    """Per-priority PFC from iproute2's `dcb pfc show dev <if>` ('prio-pfc 0:off … 3:on …')."""
    pairs = dict(re.findall(r"\b([0-7]):(on|off)\b", text.split("prio-pfc", 1)[-1]))
    if "prio-pfc" not in text or len(pairs) != 8:
        raise ParseError("dcb pfc", "'prio-pfc 0:off 1:off … 7:off' with all 8 priorities", text)
    return {"tool": "dcb", "trust": None, "pfc": [pairs[str(p)] == "on" for p in range(8)]}


def _mtu(text: str) -> int | None:
    return int_or_none(text.split("(", maxsplit=1)[0])


def _ibv_port(lines: list[str]) -> dict[str, Any]:
    f = dict(_kv(line) for line in lines)
    return {
        "port": int_or_none(f.get("port")),
        "state": f.get("state"),
        "max_mtu": _mtu(f.get("max_mtu", "")),
        "active_mtu": _mtu(f.get("active_mtu", "")),
        "link_layer": f.get("link_layer"),
    }


def _kv(line: str) -> tuple[str, str]:
    key, _, value = line.strip().partition(":")
    return key.strip(), value.strip()


def _ibv_device(block: str) -> dict[str, Any]:
    head, *ports = re.split(r"^\s*port:", block, flags=re.MULTILINE)
    f = dict(_kv(line) for line in head.splitlines() if ":" in line)
    parsed = [_ibv_port(["port:" + p.splitlines()[0], *p.splitlines()[1:]]) for p in ports]
    return {
        "name": f.get("hca_id"),
        "transport": f.get("transport"),
        "fw_ver": f.get("fw_ver"),
        "ports": parsed,
    }


def parse_ibv_devinfo(text: str) -> dict[str, Any]:
    """Devices and ports (state, max/active MTU, link layer) from `ibv_devinfo`."""
    if "No IB devices found" in text:
        return {"devices": []}
    blocks = re.split(r"^(?=hca_id:)", text, flags=re.MULTILINE)
    devices = [_ibv_device(b) for b in blocks if b.startswith("hca_id:")]
    if not devices:
        raise ParseError("ibv_devinfo", "'hca_id:' blocks with 'port:' sections", text)
    return {"devices": devices}


def _qos(ex: Executor, ctx: HostContext, col: Collected, netdev: str) -> dict[str, Any] | None:
    if has_tool(ex, "mlnx_qos"):
        command = "mlnx_qos -i %s"
        return run_parsed(
            ex, col, f"mlnx_qos {netdev}", parse_mlnx_qos, command, netdev, timeout_s=30, sudo=ctx.sudo
        )
    if has_tool(ex, "dcb"):
        return run_parsed(
            ex, col, f"dcb pfc {netdev}", parse_dcb_pfc, "dcb pfc show dev %s", netdev, timeout_s=30
        )
    if "mlnx_qos" not in col.missing_tools:
        col.missing_tools.append("mlnx_qos")  # neither mlnx_qos nor dcb: PFC and trust cannot be read
    return None


def _ibv(ex: Executor, col: Collected) -> dict[tuple[str, int], dict[str, Any]]:
    if not has_tool(ex, "ibv_devinfo"):
        col.missing_tools.append("ibv_devinfo")
        return {}
    parsed = run_parsed(ex, col, "ibv_devinfo", parse_ibv_devinfo, "ibv_devinfo", timeout_s=30)
    out = {}
    for dev in (parsed or {}).get("devices", []):
        for port in dev["ports"]:
            out[(dev["name"], port["port"])] = port | {"transport": dev["transport"], "fw_ver": dev["fw_ver"]}
    return out


def interface(port: dict[str, Any], probe: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """One RoCE netdev's facts: its port, GIDs, ECN switches, rdma_cm mode, verbs port and QoS."""
    key = (port["device"], port["port"])
    gids = [g for g in probe["gids"] if (g["device"], g["port"]) == key]
    verbs = extra["ibv"].get(key, {})
    return port | {
        "gids": gids,
        "ecn": probe["ecn"].get(port["netdev"]),
        "cm_mode": extra["cm"].get(f"{port['device']}/{port['port']}"),
        "active_mtu": verbs.get("active_mtu"),
        "max_mtu": verbs.get("max_mtu"),
        "port_state": verbs.get("state"),
        "transport": verbs.get("transport"),
        "qos": extra["qos"].get(port["netdev"]),
    }


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """RoCE facts for every Ethernet RDMA port bound to a netdev (none on a host without RDMA)."""
    col = Collected(facts={"interfaces": {}})
    probe = run_parsed(ex, col, "sysfs", parse_probe, PROBE, timeout_s=60)
    roce = [p for p in (probe or {}).get("ports", []) if p["link_layer"] == "Ethernet" and p["netdev"]]
    if probe is None or not roce:
        return col
    extra = {
        "cm": run_parsed(ex, col, "rdma_cm", parse_cm, CM_PROBE, timeout_s=30, sudo=ctx.sudo) or {},
        "ibv": _ibv(ex, col),
        "qos": {p["netdev"]: _qos(ex, ctx, col, p["netdev"]) for p in roce},
    }
    col.facts["interfaces"] = {p["netdev"]: interface(p, probe, extra) for p in roce}
    return col
