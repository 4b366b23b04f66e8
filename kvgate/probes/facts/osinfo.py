"""OS facts: `/etc/os-release` (ID, VERSION_ID, PRETTY_NAME) and `uname -r` (the kernel).

>>> parse_os_release('ID=debian\\nVERSION_ID="12"\\n')["version_id"]
'12'
"""

from __future__ import annotations

import shlex
from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, run_parsed
from kvgate.transport import Executor


def _value(raw: str) -> str:
    """An os-release value: shell-quoted or bare."""
    try:
        parts = shlex.split(raw)
    except ValueError:
        return raw.strip()
    return " ".join(parts)


def parse_os_release(text: str) -> dict[str, Any]:
    """ID, VERSION_ID, VERSION_CODENAME and PRETTY_NAME from os-release(5) text."""
    pairs = {}
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if sep and key.strip() and not key.lstrip().startswith("#"):
            pairs[key.strip()] = _value(raw)
    if "ID" not in pairs:
        raise ParseError("/etc/os-release", "an ID=<name> line", text)
    return {
        "id": pairs["ID"],
        "version_id": pairs.get("VERSION_ID"),
        "version_codename": pairs.get("VERSION_CODENAME"),
        "pretty_name": pairs.get("PRETTY_NAME"),
    }


def parse_uname(text: str) -> dict[str, Any]:
    """The kernel release from `uname -r`."""
    release = text.strip()
    if not release or len(release.split()) != 1:
        raise ParseError("uname -r", "one kernel release string", text)
    return {"kernel": release}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Read os-release and the kernel release."""
    del ctx  # nothing host-specific to pass
    col = Collected()
    col.facts.update(
        run_parsed(ex, col, "os-release", parse_os_release, "cat /etc/os-release", timeout_s=10) or {}
    )
    col.facts.update(run_parsed(ex, col, "uname", parse_uname, "uname -r", timeout_s=10) or {})
    return col
