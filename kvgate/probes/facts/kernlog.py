"""Kernel log lines about storage, fabrics and memory within a time window (journal, else dmesg).

The journal is asked for the window itself (``journalctl -k --since @T0 --until @T1``, unix
times); dmesg prints the whole ring buffer with ISO times and the parser keeps the window.
Each kept line has its unix time and its kind: OOM, hung task, I/O error, multipath, NVMe-oF,
RDMA or NVMe (the first that matches, in that order).

>>> text = "#source dmesg\\n2026-12-06T01:35:45,733148+00:00 nvme nvme0: I/O 12 QID 3 timeout, aborting\\n"
>>> [(x["kind"], x["time_unix_s"]) for x in parse_kernel_window(text, since=0, until=2e9)["lines"]]
[('NVMe', 1796520945.733148)]
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from kvgate.probes.facts.base import ParseError
from kvgate.transport import Executor

COMMAND = (
    "if [ -n \"$(journalctl -k -q --no-pager -n 1 2>/dev/null)\" ]; then echo '#source journal'; "
    "journalctl -k -q --no-pager -o short-unix --since @%s --until @%s; "
    "elif dmesg >/dev/null 2>&1; then echo '#source dmesg'; dmesg --time-format=iso; "
    "else echo '#source none'; fi"
)
KINDS = (  # the first that matches names the line
    ("OOM", r"out of memory|oom-kill|invoked oom-killer|oom_reaper"),
    ("hung task", r"blocked for more than \d+ seconds|hung_task"),
    ("I/O error", r"I/O error|blk_update_request|critical medium error|print_req_error"),
    ("multipath", r"multipath|no usable path|no available path|\bANA state"),
    ("NVMe-oF", r"nvme.*\b(rdma|tcp|fabrics|fc)\b|nvmf|nvme_(rdma|tcp|fabrics)"),
    ("RDMA", r"\brdma_|\brdma\b|\bmlx[45]_|\bib_(core|uverbs|cm|ipoib)\b|\broce\b|infiniband"),
    ("NVMe", r"\bnvme(\d|t\b|\b|_)"),
)
_KINDS = [(kind, re.compile(rx, re.IGNORECASE)) for kind, rx in KINDS]
_JOURNAL = re.compile(r"^(\d+\.\d+)\s+\S+\s+kernel:\s*(.*)$")
_DMESG = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[,.](\d+))?([+-]\d\d:?\d\d)\s+(.*)$")


def kind_of(message: str) -> str | None:
    return next((kind for kind, rx in _KINDS if rx.search(message)), None)


def _when(line: str) -> tuple[float, str] | None:
    if m := _JOURNAL.match(line):
        return float(m[1]), m[2]
    if m := _DMESG.match(line):
        stamp = datetime.fromisoformat(f"{m[1]}{m[3]}").timestamp()
        return stamp + float(f"0.{m[2] or 0}"), m[4]
    return None


def parse_kernel_window(text: str, *, since: float, until: float) -> dict[str, Any]:
    """The source and every line of a kind inside ``[since, until]`` (unix seconds)."""
    source = re.search(r"^#source (.+)$", text, re.MULTILINE)
    if source is None or source[1] == "none":
        raise ParseError(
            "kernel log", "a readable journalctl -k or dmesg (dmesg_restrict? run with sudo)", text
        )
    lines = []
    for line in text.splitlines():
        found = _when(line)
        if found is None or not since <= found[0] <= until:
            continue
        kind = kind_of(found[1])
        if kind is not None:
            lines.append({"time_unix_s": found[0], "kind": kind, "line": found[1].strip()[:300]})
    return {"source": source[1], "since_unix_s": since, "until_unix_s": until, "lines": lines}


def kernel_window(ex: Executor, *, since: float, until: float, sudo: bool) -> dict[str, Any]:
    """The host's kernel log lines of a kind in the window (raises LabError/ParseError when unreadable)."""
    res = ex.run(COMMAND, int(since), int(until) + 1, timeout_s=120, sudo=sudo, check=True)
    return parse_kernel_window(res.stdout, since=since, until=until)
