"""Memory facts from `/proc/meminfo` (values in kB, i.e. KiB, converted to bytes here).

>>> parse_meminfo("MemTotal:       24683664 kB\\nMemAvailable:   24337840 kB\\n")["mem_total_bytes"]
25276071936
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, collect_one
from kvgate.transport import Executor

TOOL = "/proc/meminfo"
_LINE = re.compile(r"^(?P<key>[\w()]+):\s+(?P<value>[0-9]{1,30})(?:\s+(?P<unit>kB))?\s*$")
_KEYS = {
    "MemTotal": "mem_total_bytes",
    "MemAvailable": "mem_available_bytes",
    "SwapTotal": "swap_total_bytes",
    "Hugepagesize": "hugepage_size_bytes",
}


def _fields(text: str) -> dict[str, int]:
    """Every `Key: value [kB]` line as bytes (kB lines) or a plain count."""
    out = {}
    for line in text.splitlines():
        if m := _LINE.match(line):
            out[m["key"]] = int(m["value"]) * (1024 if m["unit"] else 1)
    return out


def parse_meminfo(text: str) -> dict[str, Any]:
    """Total/available memory, swap and huge pages, in bytes."""
    f = _fields(text)
    if "MemTotal" not in f:
        raise ParseError(TOOL, "a 'MemTotal: <n> kB' line", text)
    facts: dict[str, Any] = {name: f.get(key) for key, name in _KEYS.items()}
    facts["hugepages_total"] = f.get("HugePages_Total")
    return facts


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Read /proc/meminfo on the host."""
    del ctx  # nothing host-specific to pass
    return collect_one(ex, "meminfo", parse_meminfo, "cat /proc/meminfo", timeout_s=10)
