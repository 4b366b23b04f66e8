"""Block device facts from `lsblk -J -b -o ...` (sizes in bytes; old util-linux prints strings).

lsblk prints a device with several parents (LVM or MD RAID over several drives)
once under each parent; here it is one device with all its parents.

>>> parse_lsblk('{"blockdevices": [{"name": "vda", "kname": "vda", "type": "disk", '
...             '"size": "274877906944", "rota": "1"}]}')["devices"][0]["size_bytes"]
274877906944
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, collect_one, load_json
from kvgate.transport import Executor

TOOL = "lsblk"
COLUMNS = "NAME,KNAME,TYPE,SIZE,MODEL,SERIAL,ROTA,TRAN,LOG-SEC,PHY-SEC,MOUNTPOINT,FSTYPE"


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    text = str(value).strip()
    return int(text) if re.fullmatch(r"[0-9]{1,30}", text) else None


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return {"1": True, "0": False}.get(str(value).strip()) if value is not None else None


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


def _device(entry: Any) -> dict[str, Any]:
    kname = _text(entry.get("kname")) or _text(entry.get("name")) if isinstance(entry, dict) else None
    if kname is None:
        raise ParseError(TOOL, "a name or kname for every block device", str(entry))
    return {
        "name": kname,
        "path": f"/dev/{kname}",
        "parents": [],
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


def _walk(entries: Any, parent: str | None, seen: dict[str, dict[str, Any]]) -> None:
    """Add every device once (first appearance keeps its place), collecting each parent it has."""
    if not isinstance(entries, list):
        raise ParseError(TOOL, "blockdevices and children as lists", str(entries))
    for entry in entries:
        dev = _device(entry)
        dev = seen.setdefault(dev["name"], dev)
        if parent is not None and parent not in dev["parents"]:
            dev["parents"].append(parent)
        _walk(entry.get("children", []), dev["name"], seen)


def parse_lsblk(text: str) -> dict[str, Any]:
    """Every disk, partition and mapper device once, with the names of all its parents."""
    doc = load_json(text, TOOL, "lsblk -J output")
    if not isinstance(doc, dict) or not isinstance(doc.get("blockdevices"), list):
        raise ParseError(TOOL, 'a JSON object {"blockdevices": [...]}', text)
    seen: dict[str, dict[str, Any]] = {}
    _walk(doc["blockdevices"], None, seen)
    return {"devices": list(seen.values())}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Run lsblk with a fixed column set (no PATH: util-linux < 2.33 lacks it)."""
    del ctx  # nothing host-specific to pass
    return collect_one(ex, "lsblk", parse_lsblk, "lsblk -J -b -o %s", COLUMNS, timeout_s=30, tool=TOOL)
