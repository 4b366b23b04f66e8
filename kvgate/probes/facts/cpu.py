"""CPU facts from `lscpu -J` (flat in util-linux ≤ 2.37, nested `children` since 2.38).

A CPU with several core types (ARM big.LITTLE, some hybrids) prints one "Model name"
block per type, each with its own cores per socket; "-" stands for a value lscpu
does not know. Physical cores are summed over the blocks.

>>> parse_lscpu('{"lscpu": [{"field": "Socket(s):", "data": "2"}, '
...             '{"field": "Model name:", "data": "AMD EPYC 7451"}, '
...             '{"field": "Core(s) per socket:", "data": "24"}]}')["cores"]
48
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, collect_one, int_or_none, load_json
from kvgate.transport import Executor

TOOL = "lscpu"
PLACEHOLDERS = ("", "-")
UNNAMED = "(unnamed core type)"
BLOCK_KEYS = ("Thread(s) per core", "Core(s) per socket", "Core(s) per cluster", "Socket(s)", "Cluster(s)")


@dataclass
class _Fields:
    """Top-level fields (first occurrence wins) and one dict per "Model name" block, in order."""

    top: dict[str, str] = field(default_factory=dict)
    blocks: list[dict[str, str]] = field(default_factory=list)

    def add(self, name: str, data: str) -> None:
        if name == "Model name":
            self.blocks.append({name: data})
        elif name in BLOCK_KEYS and self.blocks:
            self.blocks[-1].setdefault(name, data)
        self.top.setdefault(name, data)


def _walk(entries: Any, into: _Fields) -> None:
    """`{"field": "Socket(s):", "data": "2", "children": [...]}` entries in document order."""
    if not isinstance(entries, list):
        raise ParseError(TOOL, "a list of {field, data} entries", str(entries))
    for entry in entries:
        if not isinstance(entry, dict) or "field" not in entry:
            raise ParseError(TOOL, "entries with a 'field' key", str(entry))
        data = entry.get("data")
        into.add(str(entry["field"]).rstrip(":").strip(), "" if data is None else str(data).strip())
        _walk(entry.get("children", []), into)


def _known(text: str | None) -> str | None:
    return None if text is None or text in PLACEHOLDERS else text


def _cores(block: dict[str, str]) -> int | None:
    """Cores of one core type: per socket × sockets, or per cluster × clusters (ARM without sockets)."""
    per_socket, sockets = int_or_none(block.get("Core(s) per socket")), int_or_none(block.get("Socket(s)"))
    if per_socket is not None and sockets is not None:
        return per_socket * sockets
    per_cluster, clusters = (
        int_or_none(block.get("Core(s) per cluster")),
        int_or_none(block.get("Cluster(s)")),
    )
    return per_cluster * clusters if per_cluster is not None and clusters is not None else None


def _core_type(block: dict[str, str]) -> dict[str, Any]:
    per = int_or_none(block.get("Core(s) per socket")) or int_or_none(block.get("Core(s) per cluster"))
    return {
        "model": _known(block.get("Model name")),
        "cores": _cores(block),
        "cores_per_socket": per,
        "threads_per_core": int_or_none(block.get("Thread(s) per core")),
    }


def _total(values: list[int | None]) -> int | None:
    return sum(v for v in values if v is not None) if values and None not in values else None


def _same(values: list[Any]) -> Any:
    return values[0] if values and all(v == values[0] for v in values) else None


def _model(types: list[dict[str, Any]]) -> str | None:
    """One name per core type, in lscpu's order; a type lscpu could not name stays visible."""
    names = list(dict.fromkeys(t["model"] or UNNAMED for t in types))
    return None if names == [UNNAMED] else " + ".join(names)


def parse_lscpu(text: str) -> dict[str, Any]:
    """Model(s), sockets, physical cores (all core types, all sockets) and logical CPUs from `lscpu -J`."""
    doc = load_json(text, TOOL, "lscpu -J output")
    if not isinstance(doc, dict) or not isinstance(doc.get("lscpu"), list):
        raise ParseError(TOOL, 'a JSON object {"lscpu": [...]}', text)
    found = _Fields()
    _walk(doc["lscpu"], found)
    blocks = found.blocks or [found.top]
    types = [
        _core_type(b | {k: v for k, v in found.top.items() if k not in b and k in BLOCK_KEYS}) for b in blocks
    ]
    return {
        "model": _model(types),
        "vendor": _known(found.top.get("Vendor ID")),
        "architecture": _known(found.top.get("Architecture")),
        "sockets": max(
            (s for b in blocks if (s := int_or_none(b.get("Socket(s)"))) is not None), default=None
        ),
        "cores_per_socket": _total([t["cores_per_socket"] for t in types]),
        "threads_per_core": _same([t["threads_per_core"] for t in types]),
        "cores": _total([t["cores"] for t in types]),
        "threads": int_or_none(found.top.get("CPU(s)")),
        "numa_nodes": int_or_none(found.top.get("NUMA node(s)")),
        "core_types": types,
    }


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Run `lscpu -J` on the host."""
    del ctx  # nothing host-specific to pass
    return collect_one(ex, "lscpu", parse_lscpu, "lscpu -J", timeout_s=20, tool=TOOL)
