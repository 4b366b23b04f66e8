"""CPU facts from `lscpu -J` (flat in util-linux ≤ 2.37, nested `children` since 2.38).

>>> parse_lscpu('{"lscpu": [{"field": "Socket(s):", "data": "2"}, '
...             '{"field": "Core(s) per socket:", "data": "8"}]}')["cores"]
16
"""

from __future__ import annotations

from typing import Any

from kvgate.facts.base import (
    Collected,
    HostContext,
    ParseError,
    guard,
    int_or_none,
    load_json,
    require_tool,
    run_text,
)
from kvgate.transport.base import Executor

TOOL = "lscpu"


def _flatten(entries: list[dict[str, Any]]) -> dict[str, str]:
    """`{"field": "Socket(s):", "data": "2", "children": [...]}` entries as one field -> data map."""
    out: dict[str, str] = {}
    for entry in entries:
        if "field" not in entry:
            raise ParseError(TOOL, "entries with a 'field' key", str(entry))
        out.setdefault(str(entry["field"]).rstrip(":").strip(), str(entry.get("data") or ""))
        out.update({k: v for k, v in _flatten(entry.get("children", [])).items() if k not in out})
    return out


def _product(a: int | None, b: int | None) -> int | None:
    return a * b if a is not None and b is not None else None


def parse_lscpu(text: str) -> dict[str, Any]:
    """Model, sockets, physical cores (all sockets) and logical CPUs from `lscpu -J`."""
    doc = load_json(text, TOOL, "lscpu -J output")
    if not isinstance(doc, dict) or not isinstance(doc.get("lscpu"), list):
        raise ParseError(TOOL, 'a JSON object {"lscpu": [...]}', text)
    f = _flatten(doc["lscpu"])
    sockets = int_or_none(f.get("Socket(s)"))
    per_socket = int_or_none(f.get("Core(s) per socket")) or int_or_none(f.get("Core(s) per cluster"))
    return {
        "model": f.get("Model name") or None,
        "vendor": f.get("Vendor ID") or None,
        "architecture": f.get("Architecture") or None,
        "sockets": sockets,
        "cores_per_socket": per_socket,
        "threads_per_core": int_or_none(f.get("Thread(s) per core")),
        "cores": _product(sockets, per_socket),
        "threads": int_or_none(f.get("CPU(s)")),
        "numa_nodes": int_or_none(f.get("NUMA node(s)")),
    }


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Run `lscpu -J` on the host."""
    del ctx  # nothing host-specific to pass
    col = Collected()
    if require_tool(ex, col, TOOL):
        text = run_text(ex, col, "lscpu", "lscpu -J", timeout_s=20)
        col.facts.update(guard(col, "lscpu", parse_lscpu, text) or {})
    return col
