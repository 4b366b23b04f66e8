"""Small stdlib-only probes run on the engine host through the Executor.

The controller may not reach the engine port, so every HTTP call, liveness probe
and process-group signal runs *on the host* as ``python3 -c <script>``; the
result comes back as one JSON line.

>>> from kvgate.transport import LocalExecutor
>>> group_members(LocalExecutor(), "python3", 999999999)
[]
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvgate.base.errors import CommandFailed
from kvgate.transport import Executor

# Bodies longer than this go through a file: one argv string is capped at 128 KiB on Linux.
_ARGV_BODY_MAX = 32_000

_HTTP = r"""
import json, sys, time, urllib.error, urllib.request
method, url, body, timeout, stream = sys.argv[1:6]
if body.startswith("@"):
    body = open(body[1:]).read()
hdrs = {"Content-Type": "application/json"} if body else {}
req = urllib.request.Request(url, data=body.encode() or None, method=method, headers=hdrs)
out = {"status": 0, "body": "", "first_chunk_s": None, "error": ""}
t0 = time.monotonic()
try:
    with urllib.request.urlopen(req, timeout=float(timeout)) as r:
        out["status"] = r.status
        parts = []
        for line in (r if stream == "1" else [r.read()]):
            if out["first_chunk_s"] is None and line.startswith(b"data:") and b"[DONE]" not in line:
                out["first_chunk_s"] = time.monotonic() - t0
            parts.append(line)
        out["body"] = b"".join(parts).decode(errors="replace")
except urllib.error.HTTPError as e:
    out["status"], out["body"] = e.code, e.read().decode(errors="replace")
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
out["elapsed_s"] = time.monotonic() - t0
print(json.dumps(out))
"""

_PROBE = r"""
import json, sys, urllib.error, urllib.request
pid, url, timeout = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
try:
    state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
except OSError:
    state = "gone"
status = 0
if state not in ("gone", "Z", "X"):
    try:
        status = urllib.request.urlopen(url, timeout=timeout).status
    except urllib.error.HTTPError as e:
        status = e.code
    except Exception:
        status = 0
print(json.dumps({"state": state, "status": status}))
"""

# Signal a process group (sig "0" only looks), then list its members that are not zombies.
_GROUP = r"""
import json, os, signal, sys
pgid, sig = int(sys.argv[1]), sys.argv[2]
if sig != "0":
    try:
        os.killpg(pgid, getattr(signal, sig))
    except (ProcessLookupError, PermissionError):
        pass
alive = []
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            fields = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            alive.append(int(d))
print(json.dumps(sorted(alive)))
"""

# The TCP ports the group's processes listen on, as "address:port" (/proc/net/tcp{,6} state 0A,
# matched to the sockets in each member's fd table): what the engine opened to the network.
_LISTENING = r"""
import ipaddress, json, os, sys
pgid, inodes = int(sys.argv[1]), set()
for d in filter(str.isdigit, os.listdir("/proc")):
    try:
        if int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[2]) != pgid:
            continue
        links = [os.readlink(f"/proc/{d}/fd/{fd}") for fd in os.listdir(f"/proc/{d}/fd")]
    except OSError:
        continue
    inodes |= {link[8:-1] for link in links if link.startswith("socket:[")}
found = set()
for table, size in (("tcp", 4), ("tcp6", 16)):
    try:
        rows = open(f"/proc/net/{table}").read().splitlines()[1:]
    except OSError:
        continue
    for row in rows:
        f = row.split()
        if f[3] != "0A" or f[9] not in inodes:
            continue
        raw, port = f[1].split(":")
        words = [bytes.fromhex(raw[i:i + 8])[::-1] for i in range(0, len(raw), 8)]
        addr = ipaddress.ip_address(b"".join(words))
        found.add(f"{addr}:{int(port, 16)}" if size == 4 else f"[{addr}]:{int(port, 16)}")
print(json.dumps(sorted(found)))
"""


@dataclass(frozen=True)
class HttpResult:
    """One HTTP exchange made on the engine host."""

    status: int
    body: str
    elapsed_s: float
    first_chunk_s: float | None
    error: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300 and not self.error

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


def _json_line(ex: Executor, template: str, *args: object, timeout_s: float) -> Any:
    result = ex.run(template, *args, timeout_s=timeout_s)
    if not result.ok or not result.stdout.strip():
        raise CommandFailed(result)
    return json.loads(result.stdout.strip().splitlines()[-1])


def _body_arg(ex: Executor, body: str, scratch_dir: str) -> str:
    if len(body) <= _ARGV_BODY_MAX:
        return body
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        fh.write(body)
    remote = f"{scratch_dir}/request-body.json"
    try:
        ex.put(Path(fh.name), remote)
    finally:
        Path(fh.name).unlink()
    return "@" + remote


def http(
    ex: Executor,
    python: str,
    method: str,
    url: str,
    *,
    body: str = "",
    timeout_s: float = 10.0,
    stream: bool = False,
    scratch_dir: str = "/tmp",
) -> HttpResult:
    """Make one HTTP call from the host itself; ``stream`` times the first SSE chunk."""
    arg = _body_arg(ex, body, scratch_dir)
    out = _json_line(
        ex,
        "%s -c %s %s %s %s %s %s",
        python,
        _HTTP,
        method,
        url,
        arg,
        timeout_s,
        int(stream),
        timeout_s=timeout_s + 15,
    )
    return HttpResult(out["status"], out["body"], out["elapsed_s"], out["first_chunk_s"], out["error"])


def probe(ex: Executor, python: str, pid: int, url: str, *, timeout_s: float = 2.0) -> tuple[str, int]:
    """``(process state, HTTP status)``: state is a /proc letter or "gone"; status 0 = no answer."""
    out = _json_line(ex, "%s -c %s %s %s %s", python, _PROBE, pid, url, timeout_s, timeout_s=timeout_s + 15)
    return str(out["state"]), int(out["status"])


def group_members(ex: Executor, python: str, pgid: int, signal_name: str = "0") -> list[int]:
    """Send ``signal_name`` (e.g. "SIGTERM"; "0" = none) to a process group; return its live pids."""
    return [int(p) for p in _json_line(ex, "%s -c %s %s %s", python, _GROUP, pgid, signal_name, timeout_s=30)]


def listening(ex: Executor, python: str, pgid: int) -> list[str]:
    """The TCP ``address:port`` pairs a process group listens on (``0.0.0.0``, ``[::]``: every interface)."""
    return [str(p) for p in _json_line(ex, "%s -c %s %s", python, _LISTENING, pgid, timeout_s=30)]


__all__ = ["HttpResult", "group_members", "http", "listening", "probe"]
