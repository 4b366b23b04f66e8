"""Volume mount facts: `findmnt -J -T <path>` (source, fstype, options) and `df -P -B1` (free bytes).

`-T` resolves the mount that holds the path, so a volume may be a directory below
its mount point; when mounts are stacked the last (topmost) entry is the live one.

>>> parse_df("Filesystem 1-blocks Used Available Capacity Mounted on\\n"
...          "/dev/vda 270553174016 171532632064 85266055168 67% /\\n")["free_bytes"]
85266055168
"""

from __future__ import annotations

from typing import Any

from kvgate.configuration.inventory import Volume
from kvgate.probes.facts.base import Collected, HostContext, ParseError, load_json, require_tool, run_parsed
from kvgate.transport import Executor

TOOL = "findmnt"


def parse_findmnt(text: str) -> dict[str, Any]:
    """Source, target, fstype and options of the topmost mount in `findmnt -J` output."""
    doc = load_json(text, TOOL, "findmnt -J output")
    filesystems = doc.get("filesystems") if isinstance(doc, dict) else None
    if not filesystems or not isinstance(filesystems, list):
        raise ParseError(TOOL, 'a JSON object {"filesystems": [...]} with one entry', text)
    top = filesystems[-1]
    if not isinstance(top, dict):
        raise ParseError(TOOL, "filesystems[] entries as objects", str(top))
    return {
        "source": _str(top.get("source")),
        "target": _str(top.get("target")),
        "fstype": _str(top.get("fstype")),
        "options": [o for o in (_str(top.get("options")) or "").split(",") if o],
    }


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_df(text: str) -> dict[str, Any]:
    """Size, used and free (available to non-root) bytes from `df -P -B1 <path>`."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        raise ParseError("df", "a header and one filesystem line", text)
    fields = lines[-1].split()
    try:
        size, used, avail = (int(f) for f in fields[1:4])
    except (ValueError, IndexError) as exc:
        raise ParseError("df", "'<fs> <size> <used> <avail> <use%> <mount>' in bytes", lines[-1]) from exc
    return {"size_bytes": size, "used_bytes": used, "free_bytes": avail}


def _volume(ex: Executor, col: Collected, name: str, vol: Volume) -> dict[str, Any]:
    facts: dict[str, Any] = {"path": vol.path, "exists": ex.run("test -d %s", vol.path, timeout_s=15).ok}
    if not facts["exists"]:
        col.errors[f"volume {name}"] = f"{vol.path} does not exist or is not a directory"
        return facts
    findmnt = "findmnt -J -T %s -o SOURCE,TARGET,FSTYPE,OPTIONS"
    facts.update(run_parsed(ex, col, f"findmnt {name}", parse_findmnt, findmnt, vol.path, timeout_s=15) or {})
    facts.update(run_parsed(ex, col, f"df {name}", parse_df, "df -P -B1 %s", vol.path, timeout_s=30) or {})
    return facts


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Mount and capacity facts for every volume of this host."""
    col = Collected(facts={"volumes": {}})
    if ctx.volumes and require_tool(ex, col, TOOL):
        for name, vol in ctx.volumes.items():
            col.facts["volumes"][name] = _volume(ex, col, name, vol)
    return col
