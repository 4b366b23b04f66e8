"""The facts contract: what a collector gets (HostContext), returns (Collected), and shares.

Every collector runs its commands through an Executor, so it behaves the same on
this machine and over SSH. A sub-probe that fails is recorded, never raised: the
family keeps going and the G1 plan turns the recorded error into INVALID. A probe
that did not end by itself is no failure of the host: a lost connection
(TransportError) and Ctrl-C (Interrupted) propagate and nothing is recorded.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kvgate.base.errors import CommandTimeout
from kvgate.configuration.inventory import Volume
from kvgate.transport import CommandResult, Executor

T = TypeVar("T")


class ParseError(ValueError):
    """A tool printed something its parser does not understand; names tool and expectation."""

    def __init__(self, tool: str, expected: str, got: str = "") -> None:
        self.tool, self.expected = tool, expected
        detail = f"; got {got[:120]!r}" if got else ""
        super().__init__(f"{tool}: expected {expected}{detail}")


@dataclass(frozen=True)
class HostContext:
    """What a collector needs to know about the host beyond its Executor."""

    host: str
    volumes: dict[str, Volume]
    sudo: bool
    tools: tuple[str, ...] = ()  # extra tools whose version is wanted (the BOM's `tools:` map)


@dataclass
class Collected:
    """One family's facts, the raw text behind them, and what could not be collected."""

    facts: dict[str, Any] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)  # artifact name -> raw command output
    missing_tools: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # sub-probe -> readable error

    def to_json(self) -> dict[str, Any]:
        """Facts, missing tools and errors (artifacts are stored separately by the caller)."""
        return {"facts": self.facts, "missing_tools": self.missing_tools, "errors": self.errors}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Collected:
        """Rebuild from `to_json()` output (artifacts are not part of it); ValueError when it is not that."""
        parts = {"facts": dict, "missing_tools": list, "errors": dict}
        if not isinstance(data, dict):
            raise ValueError(f"expected an object with {', '.join(parts)}, got {type(data).__name__}")
        for key, kind in parts.items():
            if not isinstance(data.get(key, kind()), kind):
                raise ValueError(f"{key}: expected {'an object' if kind is dict else 'a list'}")
        return cls(
            facts=dict(data.get("facts", {})),
            missing_tools=list(data.get("missing_tools", [])),
            errors=dict(data.get("errors", {})),
        )


def has_tool(ex: Executor, tool: str) -> bool:
    """True when `tool` is on the host's PATH (one `command -v`)."""
    return ex.run("command -v %s", tool, timeout_s=10).ok


def require_tool(ex: Executor, col: Collected, tool: str) -> bool:
    """Check for a tool; record it as missing when absent."""
    if has_tool(ex, tool):
        return True
    col.missing_tools.append(tool)
    return False


def failure_text(res: CommandResult) -> str:
    """A one-line account of a failed command for `Collected.errors`."""
    tail = res.tail(3) or res.tail(3, "stdout") or "(no output)"
    return f"`{res.command}` exited {res.exit_status}: {tail}"


def run_result(
    ex: Executor, col: Collected, name: str, command: str, *args: object, timeout_s: float, sudo: bool = False
) -> CommandResult | None:
    """Run a sub-probe and keep its output as artifact `name`; a timeout is recorded, not raised.

    TransportError and Interrupted propagate: an interrupted probe is not a fact.
    """
    try:
        res = ex.run(command, *args, timeout_s=timeout_s, sudo=sudo)
    except CommandTimeout as exc:
        col.errors[name] = str(exc)
        return None
    col.artifacts[name] = res.stdout if res.ok else f"{res.stdout}\n--- stderr:\n{res.stderr}"
    return res


def run_text(
    ex: Executor, col: Collected, name: str, command: str, *args: object, timeout_s: float, sudo: bool = False
) -> str | None:
    """Run a sub-probe that must succeed; its stdout, or None with the error recorded."""
    res = run_result(ex, col, name, command, *args, timeout_s=timeout_s, sudo=sudo)
    if res is None:
        return None
    if not res.ok:
        col.errors[name] = failure_text(res)
        return None
    return res.stdout


def guard(col: Collected, name: str, parse: Callable[[str], T], text: str | None) -> T | None:
    """Parse sub-probe output; a ParseError is recorded under `name` instead of raised."""
    if text is None:
        return None
    try:
        return parse(text)
    except ParseError as exc:
        col.errors[name] = str(exc)
        return None


def run_parsed(
    ex: Executor,
    col: Collected,
    name: str,
    parse: Callable[[str], T],
    command: str,
    *args: object,
    timeout_s: float,
    sudo: bool = False,
) -> T | None:
    """Run a sub-probe that must succeed and parse its stdout; None with the error recorded under `name`."""
    return guard(col, name, parse, run_text(ex, col, name, command, *args, timeout_s=timeout_s, sudo=sudo))


def collect_one(
    ex: Executor,
    name: str,
    parse: Callable[[str], dict[str, Any]],
    command: str,
    *args: object,
    timeout_s: float,
    tool: str | None = None,
) -> Collected:
    """The facts of one sub-probe; with `tool`, only when that tool is on the host's PATH."""
    col = Collected()
    if tool is None or require_tool(ex, col, tool):
        col.facts.update(run_parsed(ex, col, name, parse, command, *args, timeout_s=timeout_s) or {})
    return col


def load_json(text: str, tool: str, expected: str) -> Any:
    """json.loads that names the tool and what was expected on failure."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(tool, f"{expected} (JSON: {exc.msg} at line {exc.lineno})", text) from exc
    except (ValueError, RecursionError) as exc:  # a 5000-digit number, nesting past the recursion limit
        raise ParseError(tool, f"{expected} (JSON: {type(exc).__name__})", text) from exc


def number(value: Any, tool: str, what: str) -> float:
    """A finite number from JSON that may be an int, a float or a numeric string ("310", "2.0")."""
    found: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        found = float(value) if abs(value) < 1e300 else None  # float(10**400) would overflow
    elif isinstance(value, str) and (m := re.search(r"-?\d{1,300}(?:\.\d+)?", value.replace(",", ""))):
        found = float(m[0])
    if found is None or not math.isfinite(found):
        raise ParseError(tool, f"a number for {what}", repr(value)[:120])
    return found


def whole(value: Any, tool: str, what: str) -> int:
    """An exact integer (byte counts past 2**53 stay exact); floats and numeric strings are truncated."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return int(number(value, tool, what))


def int_or_none(text: str | None) -> int | None:
    """An integer sysfs/CLI field, or None for '', '-', 'N/A', 'unknown' and the like."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(-?[0-9]{1,30})\s*", text)  # int() refuses > 4300 digits
    return int(m[1]) if m else None


def split_rows(text: str, fields: int, tool: str) -> list[list[str]]:
    """`a|b|c` lines from a sysfs probe script, each with exactly `fields` cells."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) != fields:
            raise ParseError(tool, f"{fields} '|'-separated fields per line", line)
        rows.append([c.strip() for c in cells])
    return rows


def artifact_name(family: str, probe: str) -> str:
    """Where a probe's raw output is stored under artifacts/<host>/: 'nvme/smart-log_nvme0n1.txt'."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", probe).strip("_") or "output"
    return f"{family}/{safe}.txt"
