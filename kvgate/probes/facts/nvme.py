"""NVMe facts from nvme-cli JSON: `nvme list`, `nvme smart-log`, `nvme list-subsys`.

Local (PCIe) namespaces are told apart from NVMe-oF ones by the controller's
sysfs `transport`; smart-log's `temperature` is in Kelvin and becomes °C here.

>>> parse_smart_log('{"critical_warning": 0, "temperature": 310, "percent_used": 2, '
...                 '"media_errors": 0}')["temperature_c"]
36.85
"""

from __future__ import annotations

from functools import partial
from typing import Any

from kvgate.probes.facts.base import (
    Collected,
    HostContext,
    ParseError,
    failure_text,
    guard,
    load_json,
    number,
    require_tool,
    run_parsed,
    run_result,
    run_text,
    split_rows,
    whole,
)
from kvgate.transport import Executor

TOOL = "nvme"
KELVIN_OFFSET = 273.15
FABRIC_TRANSPORTS = ("rdma", "tcp", "fc", "loop")
OVERFLOW = "nvme-cli 2.2-2.5 printed 64-bit sizes as 32-bit integers (fixed by its commit 87bf24cdffc1)"
# namespace block device -> transport of its controller (a multipath head: of its first path)
TRANSPORT_PROBE = (
    'for b in /sys/block/nvme*; do [ -e "$b" ] || continue; '
    't=$(cat "$b/device/transport" 2>/dev/null || cat "$b"/device/nvme*/transport 2>/dev/null | head -n 1); '
    'echo "${b##*/}|$t"; done'
)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _capacity(entry: dict[str, Any]) -> tuple[int | None, str | None]:
    """PhysicalSize in bytes, or None and why the size the tool printed cannot be true."""
    if entry.get("PhysicalSize") is None:
        return None, None
    size = whole(entry["PhysicalSize"], "nvme list", "PhysicalSize")
    if size < 0:
        return None, f"PhysicalSize {size} is negative: {OVERFLOW}"
    lbas, sector = _positive(entry.get("MaximumLBA")), _positive(entry.get("SectorSize"))
    if lbas and sector and lbas * sector != size:
        return None, f"PhysicalSize {size} != MaximumLBA {lbas} x SectorSize {sector}: a field overflowed"
    return size, None


def _text(entry: dict[str, Any], key: str) -> str | None:
    return str(entry.get(key, "")).strip() or None


def _namespace(entry: dict[str, Any], path: str, ctrl: dict[str, Any]) -> dict[str, Any]:
    """One namespace; `ctrl` holds model, serial, firmware and transport (the entry itself in 1.x)."""
    size, why = _capacity(entry)
    dev = {
        "device": path,
        "name": path.rsplit("/", 1)[-1],
        "model": _text(ctrl, "ModelNumber"),
        "serial": _text(ctrl, "SerialNumber"),
        "firmware": _text(ctrl, "Firmware"),
        "capacity_bytes": size,
        "sector_bytes": entry["SectorSize"] if isinstance(entry.get("SectorSize"), int) else None,
        "namespace_id": entry.get("NSID", entry.get("NameSpace")),
        "transport": _text(ctrl, "Transport"),
    }
    return dev | ({"invalid": {"capacity_bytes": why}} if why else {})


def _nested(host: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    """Subsystems[].Controllers[].Namespaces[], multipath heads in Subsystems[].Namespaces[]."""
    out = []
    for sub in _objects(host.get("Subsystems"), "Devices[].Subsystems", tool):
        ctrls = _objects(sub.get("Controllers", []), "Subsystems[].Controllers", tool)
        for ctrl in ctrls:
            out += [_ns(ns, ctrl, tool) for ns in _objects(ctrl.get("Namespaces", []), "Namespaces", tool)]
        head = ctrls[0] if ctrls else {}  # a multipath namespace: every controller is one path to it
        out += [_ns(ns, head, tool) for ns in _objects(sub.get("Namespaces", []), "Namespaces", tool)]
    return out


def _ns(entry: dict[str, Any], ctrl: dict[str, Any], tool: str) -> dict[str, Any]:
    name = entry.get("NameSpace")
    if not isinstance(name, str) or not name:
        raise ParseError(
            tool, "Namespaces[].NameSpace as a device name like nvme0n1 (nested layout)", str(entry)
        )
    return _namespace(entry, name if name.startswith("/dev/") else f"/dev/{name}", ctrl)


def _objects(value: Any, where: str, tool: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ParseError(tool, f"{where} as a list of objects", str(value))
    return value


def _entry(entry: dict[str, Any], tool: str) -> list[dict[str, Any]]:
    if isinstance(entry.get("DevicePath"), str):  # 1.x-2.10, 2.13 without -v: one entry per namespace
        return [_namespace(entry, entry["DevicePath"], entry)]
    if "Subsystems" in entry:
        return _nested(entry, tool)
    raise ParseError(
        tool,
        "Devices[] entries with DevicePath (nvme-cli <= 2.10, 2.13) or Subsystems (2.11, -v)",
        str(entry),
    )


def parse_nvme_list(text: str, *, version: str | None = None) -> dict[str, Any]:
    """Namespaces from `nvme list -o json`: flat `Devices[]` (1.x-2.10, 2.13) or nested (2.11; `-v`)."""
    tool = f"nvme list ({version})" if version else "nvme list"
    if "No NVMe devices detected" in text and "{" not in text:
        return {"devices": []}
    doc = load_json(text, tool, 'nvme list -o json output {"Devices": [...]}')
    if not isinstance(doc, dict):
        raise ParseError(tool, 'a JSON object {"Devices": [...]}', text)
    entries = _objects(doc.get("Devices", []), "Devices", tool)
    return {"devices": [dev for entry in entries for dev in _entry(entry, tool)]}


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
    temperature_c = _celsius(doc["temperature"])
    if temperature_c <= -KELVIN_OFFSET:  # every field 0: no log came back (nvme-cli #1645, #2759)
        raise ParseError("nvme smart-log", "a temperature above 0 K, not an all-zero log", text)
    return {
        "critical_warning": _critical_warning(doc["critical_warning"]),
        "temperature_c": temperature_c,
        "percentage_used": int(number(doc["percent_used"], "nvme smart-log", "percent_used")),
        "media_errors": int(number(doc["media_errors"], "nvme smart-log", "media_errors")),
        "available_spare_pct": _optional_int(doc, "avail_spare"),
        "power_on_hours": _optional_int(doc, "power_on_hours"),
        "unsafe_shutdowns": _optional_int(doc, "unsafe_shutdowns"),
        "error_log_entries": _optional_int(doc, "num_err_log_entries"),
    }


def _path(entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ParseError("nvme list-subsys", "Paths[] entries as objects", str(entry))
    return {
        "name": _text(entry, "Name"),
        "transport": _text(entry, "Transport"),
        "address": _text(entry, "Address"),
        "state": _text(entry, "State"),  # absent in nvme-cli 1.x
        "ana_state": _text(entry, "ANAState"),  # nvme-cli 2.x, when it reads the ANA log
    }


def _subsystems(entries: list[Any]) -> list[dict[str, Any]]:
    """Subsystems from a list whose path lists are inline (2.x) or a following entry (1.x)."""
    out: list[dict[str, Any]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise ParseError("nvme list-subsys", "subsystem objects", str(entry))
        if "NQN" in entry or "Name" in entry:
            out.append({"name": _text(entry, "Name"), "nqn": _text(entry, "NQN"), "paths": []})
        elif "Paths" not in entry or not out:
            raise ParseError("nvme list-subsys", "a subsystem (Name, NQN) before its Paths", str(entry))
        paths = entry.get("Paths", [])
        if not isinstance(paths, list):
            raise ParseError("nvme list-subsys", "Paths as a list", str(paths))
        out[-1]["paths"].extend(_path(p) for p in paths)
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
        dev["transport"] = transports.get(dev["name"]) or dev.get("transport")
        dev["local"] = _is_local(dev["transport"])
    local = [d for d in devices if d["local"]]
    return {"devices": devices, "count": len({d["serial"] or d["name"] for d in local})}


def _smart(ex: Executor, ctx: HostContext, col: Collected, dev: dict[str, Any]) -> None:
    name = f"smart-log {dev['name']}"
    command = "nvme smart-log %s -o json"
    dev["smart"] = run_parsed(
        ex, col, name, parse_smart_log, command, dev["device"], timeout_s=30, sudo=ctx.sudo
    )


def _devices(ex: Executor, ctx: HostContext, col: Collected, transports: dict[str, str]) -> None:
    res = run_result(ex, col, "nvme list", "nvme list -o json", timeout_s=60, sudo=ctx.sudo)
    if res is not None and not res.ok and not transports:
        res = None  # nvme-cli 2.x exits 1 ("Failed to scan topology") when no NVMe exists
        col.facts.update({"devices": [], "count": 0})
    elif res is not None and not res.ok:
        col.errors["nvme list"] = failure_text(res)
    parse = partial(parse_nvme_list, version=col.facts.get("cli_version"))
    parsed = guard(col, "nvme list", parse, res.stdout if res and res.ok else None)
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
    transports = run_parsed(ex, col, "transports", parse_transports, TRANSPORT_PROBE, timeout_s=30) or {}
    _devices(ex, ctx, col, transports)
    _subsys(ex, col, transports)
    return col
