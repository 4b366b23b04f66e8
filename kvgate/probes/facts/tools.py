"""Tool versions: fio, nvme, python3 and every tool the BOM names, from `--version`-style output.

Nothing a path could shadow is executed: the tool is located with ``command -v`` run
from ``/``, only an absolute path to an executable file is run (a builtin, a function
or a hit through a relative PATH entry is not), from ``/``, with stdin closed and only
option-style arguments (``TOOL version`` would have ``sh`` run a file called
``version`` from the current directory). A tool is a plain command name or an
absolute path; anything else (a relative path, a leading ``-``, ``..``) is never run.

>>> parse_version("fio-3.33\\n"), parse_version("nvme version 2.3 (git 2.3)\\n")
('3.33', '2.3')
"""

from __future__ import annotations

import re
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, run_result
from kvgate.transport import Executor

BASE_TOOLS = ("fio", "nvme", "python3")
VERSION_ARGS = ("--version", "-V")  # options only: a bare word can name a file in the cwd
_COMMAND = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*|(?:/[A-Za-z0-9_][A-Za-z0-9._+-]*)+")  # a name or a path
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)*(?:[-+~][0-9A-Za-z.]+)?)")


def parse_version(text: str) -> str | None:
    """The first version-like string (1.2, 3.11.7, 2.3.0-rc1) in a tool's version output."""
    for line in text.splitlines():
        if m := _VERSION.search(line):
            return m[1]
    return None


def locate(ex: Executor, tool: str) -> str | None:
    """``command -v TOOL`` from ``/``: its output (a path, a builtin's name …), or None when absent."""
    res = ex.run("cd / && command -v %s", tool, timeout_s=10)
    return res.stdout.strip() if res.ok and res.stdout.strip() else None


def runnable(found: str) -> bool:
    """An absolute path on one line (not a builtin, a function, nor a relative PATH entry's hit)."""
    return found.startswith("/") and "\n" not in found and "/../" not in f"{found}/"


def _version(ex: Executor, col: Collected, tool: str, path: str) -> dict[str, Any]:
    """Try `--version`, then `-V`, of the absolute path; the first output with a version wins."""
    for arg in VERSION_ARGS:
        cmd = f"{path} {arg}"
        res = run_result(ex, col, f"{tool} {arg}", "cd / && %s %s </dev/null 2>&1", path, arg, timeout_s=15)
        if res is not None and (version := parse_version(res.stdout)):
            first = res.stdout.strip().splitlines()[0]
            return {"version": version, "command": cmd, "output": first}
    col.errors[tool] = f"no version string in the output of {path} {' / '.join(VERSION_ARGS)}"
    return {"version": None}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Versions of the base tools and of every tool in the BOM's `tools:` map."""
    col = Collected(facts={"tools": {}})
    for tool in dict.fromkeys((*BASE_TOOLS, *ctx.tools)):
        if not _COMMAND.fullmatch(tool):
            col.errors[tool] = (
                f"{tool!r} is not a command name nor an absolute path (letters, digits, ._+-): not run"
            )
            continue
        found = locate(ex, tool)
        if found is None:
            col.missing_tools.append(tool)
        elif not runnable(found):
            col.errors[tool] = (
                f"`command -v {tool}` found {found!r}, not an executable's absolute path: not run"
            )
        else:
            col.facts["tools"][tool] = _version(ex, col, tool, found)
    return col
