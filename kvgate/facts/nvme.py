"""NVMe facts from nvme-cli JSON: `nvme list`, `nvme smart-log`, `nvme list-subsys`.

Local (PCIe) namespaces are told apart from NVMe-oF ones by the controller's
sysfs `transport`; smart-log's `temperature` is in Kelvin and becomes °C here.

>>> parse_smart_log('{"critical_warning": 0, "temperature": 310, "percent_used": 2, '
...                 '"media_errors": 0}')["temperature_c"]
36.85
"""

from __future__ import annotations

from typing import Any

from kvgate.facts.base import (
    Collected,
    HostContext,
    ParseError,
    failure_text,
    guard,
    load_json,
    number,
    require_tool,
    run_result,
    run_text,
    split_rows,
)
from kvgate.transport.base import Executor

TOOL = "nvme"
KELVIN_OFFSET = 273.15
FABRIC_TRANSPORTS = ("rdma", "tcp", "fc", "loop")
# namespace block device -> transport of its controller (a multipath head: of its first path)
TRANSPORT_PROBE = (
    'for b in /sys/block/nvme*; do [ -e "$b" ] || continue; '
    't=$(cat "$b/device/transport" 2>/dev/null || cat "$b"/device/nvme*/transport 2>/dev/null | head -n 1); '
    'echo "${b##*/}|$t"; done'
)


def _device(entry: dict[str, Any]) -> dict[str, Any]:
    path = entry.get("DevicePath")
    if not isinstance(path, str):
        raise ParseError("nvme list", "Devices[].DevicePath (nvme-cli flat list output)", str(entry))
    size = entry.get("PhysicalSize")
    return {
        "device": path,
        "name": path.rsplit("/", 1)[-1],
        "model": str(entry.get("ModelNumber", "")).strip() or None,
        "serial": str(entry.get("SerialNumber", "")).strip() or None,
        "firmware": str(entry.get("Firmware", "")).strip() or None,
        "capacity_bytes": int(number(size, "nvme list", "PhysicalSize")) if size is not None else None,
        "sector_bytes": entry.get("SectorSize"),
        "namespace_id": entry.get("NameSpace"),
    }


def parse_nvme_list(text: str) -> dict[str, Any]:
    """Namespaces from `nvme list -o json` (nvme-cli 1.x and 2.x flat format)."""
    if "No NVMe devices detected" in text and "{" not in text:
        return {"devices": []}
    doc = load_json(text, "nvme list", 'nvme list -o json output {"Devices": [...]}')
    if not isinstance(doc, dict) or not isinstance(doc.get("Devices", []), list):
        raise ParseError("nvme list", 'a JSON object {"Devices": [...]}', text)
    return {"devices": [_device(e) for e in doc.get("Devices", [])]}


def _critical_warning(value: Any) -> int:
    """An int, or the `-H` object form `{"value": n, ...}`."""
    raw = value.get("value") if isinstance(value, dict) else value
    return int(number(raw, "nvme smart-log", "critical_warning"))


def _celsius(value: Any) -> float:
    """smart-log temperature: Kelvin in JSON; a string ending in C is already Celsius."""
    degrees = number(value, "nvme smart-log", "temperature")
    if isinstance(value, str) and value.rstrip().endswith("C"):
        return degrees
    return round(degrees - KELVIN_OFFSET, 2)


def _optional_int(doc: dict[str, Any], key: str) -> int | None:
    return int(number(doc[key], "nvme smart-log", key)) if key in doc else None


def parse_smart_log(text: str) -> dict[str, Any]:
    """Health of one controller from `nvme smart-log <dev> -o json`."""
    doc = load_json(text, "nvme smart-log", "nvme smart-log -o json output")
    required = ("critical_warning", "temperature", "percent_used", "media_errors")
    if not isinstance(doc, dict) or any(k not in doc for k in required):
        raise ParseError("nvme smart-log", f"a JSON object with {', '.join(required)}", text)
    return {
        "critical_warning": _critical_warning(doc["critical_warning"]),
        "temperature_c": _celsius(doc["temperature"]),
        "percentage_used": int(number(doc["percent_used"], "nvme smart-log", "percent_used")),
        "media_errors": int(number(doc["media_errors"], "nvme smart-log", "media_errors")),
        "available_spare_pct": _optional_int(doc, "avail_spare"),
        "power_on_hours": _optional_int(doc, "power_on_hours"),
        "unsafe_shutdowns": _optional_int(doc, "unsafe_shutdowns"),
        "error_log_entries": _optional_int(doc, "num_err_log_entries"),
    }


def _path(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": entry.get("Name"),
        "transport": entry.get("Transport"),
        "address": entry.get("Address"),
        "state": entry.get("State"),  # absent in nvme-cli 1.x
    }


def _subsystems(entries: list[Any]) -> list[dict[str, Any]]:
    """Subsystems from a list whose path lists are inline (2.x) or a following entry (1.x)."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise ParseError("nvme list-subsys", "subsystem objects", str(entry))
        if "NQN" in entry or "Name" in entry:
            out.append({"name": entry.get("Name"), "nqn": entry.get("NQN"), "paths": []})
        elif "Paths" not in entry or not out:
            raise ParseError("nvme list-subsys", "a subsystem (Name, NQN) before its Paths", str(entry))
        out[-1]["paths"].extend(_path(p) for p in entry.get("Paths", []))
    return out


def parse_list_subsys(text: str) -> dict[str, Any]:
    """NVMe(-oF) subsystems with their paths from `nvme list-subsys -o json` (1.x or 2.x)."""
    doc = load_json(text, "nvme list-subsys", "nvme list-subsys -o json output")
    hosts = doc if isinstance(doc, list) else [doc]
    if not all(isinstance(h, dict) and isinstance(h.get("Subsystems", []), list) for h in hosts):
        raise ParseError("nvme list-subsys", '{"Subsystems": [...]} or a list of them', text)
    return {"subsystems": [s for h in hosts for s in _subsystems(h.get("Subsystems", []))]}


def parse_transports(text: str) -> dict[str, str]:
    """`nvme0n1|pcie` lines from TRANSPORT_PROBE as a namespace -> transport map."""
    return {name: transport for name, transport in split_rows(text, 2, "nvme sysfs probe") if transport}


def _is_local(transport: str | None) -> bool:
    return transport not in FABRIC_TRANSPORTS


def annotate(devices: list[dict[str, Any]], transports: dict[str, str]) -> dict[str, Any]:
    """Mark each namespace local or fabric and count local drives (distinct serial numbers)."""
    for dev in devices:
        dev["transport"] = transports.get(dev["name"])
        dev["local"] = _is_local(dev["transport"])
    local = [d for d in devices if d["local"]]
    return {"devices": devices, "count": len({d["serial"] or d["name"] for d in local})}


def _smart(ex: Executor, ctx: HostContext, col: Collected, dev: dict[str, Any]) -> None:
    name = f"smart-log {dev['name']}"
    text = run_text(ex, col, name, "nvme smart-log %s -o json", dev["device"], timeout_s=30, sudo=ctx.sudo)
    dev["smart"] = guard(col, name, parse_smart_log, text)


def _devices(ex: Executor, ctx: HostContext, col: Collected, transports: dict[str, str]) -> None:
    res = run_result(ex, col, "nvme list", "nvme list -o json", timeout_s=60, sudo=ctx.sudo)
    if res is not None and not res.ok and not transports:
        res = None  # nvme-cli 2.x exits 1 ("Failed to scan topology") when no NVMe exists
        col.facts.update({"devices": [], "count": 0})
    elif res is not None and not res.ok:
        col.errors["nvme list"] = failure_text(res)
    parsed = guard(col, "nvme list", parse_nvme_list, res.stdout if res and res.ok else None)
    if parsed is not None:
        col.facts.update(annotate(parsed["devices"], transports))
        for dev in col.facts["devices"]:
            if dev["local"]:
                _smart(ex, ctx, col, dev)


def _subsys(ex: Executor, col: Collected, transports: dict[str, str]) -> None:
    res = run_result(ex, col, "list-subsys", "nvme list-subsys -o json", timeout_s=30)
    if res is not None and not res.ok and not transports:
        col.facts["subsystems"] = []  # no NVMe namespace at all: nvme-cli exits non-zero
        return
    if res is not None and not res.ok:
        col.errors["list-subsys"] = failure_text(res)
    parsed = guard(col, "list-subsys", parse_list_subsys, res.stdout if res and res.ok else None)
    if parsed is not None:
        col.facts.update(parsed)


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Namespaces, per-controller SMART health of local drives, and NVMe-oF subsystems."""
    col = Collected()
    if not require_tool(ex, col, TOOL):
        return col
    version = run_text(ex, col, "nvme version", "nvme version", timeout_s=10)
    col.facts["cli_version"] = version.strip().splitlines()[0] if version else None
    probe = run_text(ex, col, "transports", TRANSPORT_PROBE, timeout_s=30)
    transports = guard(col, "transports", parse_transports, probe) or {}
    _devices(ex, ctx, col, transports)
    _subsys(ex, col, transports)
    return col
