"""Block device facts from `lsblk -J -b -o ...` (sizes in bytes; old util-linux prints strings).

>>> parse_lsblk('{"blockdevices": [{"name": "vda", "kname": "vda", "type": "disk", '
...             '"size": "274877906944", "rota": "1"}]}')["devices"][0]["size_bytes"]
274877906944
"""

from __future__ import annotations

from typing import Any

from kvgate.facts.base import Collected, HostContext, ParseError, guard, load_json, require_tool, run_text
from kvgate.transport.base import Executor

TOOL = "lsblk"
COLUMNS = "NAME,KNAME,TYPE,SIZE,MODEL,SERIAL,ROTA,TRAN,LOG-SEC,PHY-SEC,MOUNTPOINT,FSTYPE"


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return {"1": True, "0": False}.get(str(value).strip()) if value is not None else None


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


def _device(entry: dict[str, Any], parent: str | None) -> dict[str, Any]:
    kname = _text(entry.get("kname")) or _text(entry.get("name"))
    if kname is None:
        raise ParseError(TOOL, "a name or kname for every block device", str(entry))
    return {
        "name": kname,
        "path": f"/dev/{kname}",
        "parent": parent,
        "type": _text(entry.get("type")),
        "size_bytes": _int(entry.get("size")),
        "model": _text(entry.get("model")),
        "serial": _text(entry.get("serial")),
        "rotational": _bool(entry.get("rota")),
        "transport": _text(entry.get("tran")),
        "logical_sector_bytes": _int(entry.get("log-sec")),
        "physical_sector_bytes": _int(entry.get("phy-sec")),
        "mountpoint": _text(entry.get("mountpoint")),
        "fstype": _text(entry.get("fstype")),
    }


def _walk(entries: list[dict[str, Any]], parent: str | None) -> list[dict[str, Any]]:
    out = []
    for entry in entries:
        dev = _device(entry, parent)
        out.append(dev)
        out.extend(_walk(entry.get("children", []), dev["name"]))
    return out


def parse_lsblk(text: str) -> dict[str, Any]:
    """Every disk, partition and mapper device, children flattened with their parent's name."""
    doc = load_json(text, TOOL, "lsblk -J output")
    if not isinstance(doc, dict) or not isinstance(doc.get("blockdevices"), list):
        raise ParseError(TOOL, 'a JSON object {"blockdevices": [...]}', text)
    return {"devices": _walk(doc["blockdevices"], None)}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Run lsblk with a fixed column set (no PATH: util-linux < 2.33 lacks it)."""
    del ctx  # nothing host-specific to pass
    col = Collected()
    if require_tool(ex, col, TOOL):
        text = run_text(ex, col, "lsblk", "lsblk -J -b -o %s", COLUMNS, timeout_s=30)
        col.facts.update(guard(col, "lsblk", parse_lsblk, text) or {})
    return col
