"""Tool versions: fio, nvme, python3 and every tool the BOM names, from `--version`-style output.

>>> parse_version("fio-3.33\\n"), parse_version("nvme version 2.3 (git 2.3)\\n")
('3.33', '2.3')
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.facts.base import Collected, HostContext, has_tool, run_result
from kvgate.transport.base import Executor

BASE_TOOLS = ("fio", "nvme", "python3")
VERSION_ARGS = ("--version", "version", "-V")
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*(?:[-+~][0-9A-Za-z.]+)?)")


def parse_version(text: str) -> str | None:
    """The first version-like string (1.2, 3.11.7, 2.3.0-rc1) in a tool's version output."""
    for line in text.splitlines():
        if m := _VERSION.search(line):
            return m[1]
    return None


def _version(ex: Executor, col: Collected, tool: str) -> dict[str, Any]:
    """Try `--version`, `version`, `-V` in turn; the first output with a version wins."""
    for arg in VERSION_ARGS:
        res = run_result(ex, col, f"{tool} {arg}", "%s %s 2>&1", tool, arg, timeout_s=15)
        if res is not None and (version := parse_version(res.stdout)):
            first = res.stdout.strip().splitlines()[0]
            return {"version": version, "command": f"{tool} {arg}", "output": first}
    col.errors[tool] = f"no version string in the output of {tool} {' / '.join(VERSION_ARGS)}"
    return {"version": None}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Versions of the base tools and of every tool in the BOM's `tools:` map."""
    col = Collected(facts={"tools": {}})
    for tool in dict.fromkeys((*BASE_TOOLS, *ctx.tools)):
        if has_tool(ex, tool):
            col.facts["tools"][tool] = _version(ex, col, tool)
        else:
            col.missing_tools.append(tool)
    return col
