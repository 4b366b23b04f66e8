"""NVMe-oF path quality: controllers, ANA states and I/O policy from sysfs, the persistent
connect configuration, and transport errors in the kernel log.

The kernel prints a fabrics controller's `ctrl_loss_tmo` and `fast_io_fail_tmo` as
seconds or `off` (retry forever / never fail fast; drivers/nvme/host/core.c), and
`queue_count` counts the admin queue too. ANA states are read per path from
`/sys/class/nvme/<ctrl>/<ns>/ana_state` (optimized, non-optimized, inaccessible,
persistent-loss, change). Each namespace head's ``queue/write_cache`` is the array's
volatile write cache as its Identify Controller reports it (VWC: ``write back``, else
``write through``) and ``queue/fua`` whether it honours forced unit access: the array
acknowledging writes from its controller's cache is part of every figure measured on it.

>>> parse_timeout("off"), parse_timeout("600"), parse_timeout("")
('off', 600, None)
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from kvgate.probes.facts.base import (
    Collected,
    HostContext,
    ParseError,
    guard,
    int_or_none,
    load_json,
    run_parsed,
    run_result,
)
from kvgate.transport import Executor

# ctrl|name|transport|address|state|subsysnqn|ctrl_loss_tmo|reconnect_delay|fast_io_fail_tmo|queue_count
# ana|ctrl|namespace|state · subsys|name|nqn|iopolicy · ns|subsys name|head|write_cache|fua
PROBE = (
    'for c in /sys/class/nvme/nvme*; do [ -e "$c" ] || continue; '
    'r() { cat "$c/$1" 2>/dev/null | tr -d "\\n"; }; '
    'echo "ctrl|${c##*/}|$(r transport)|$(r address)|$(r state)|$(r subsysnqn)|$(r ctrl_loss_tmo)|'
    '$(r reconnect_delay)|$(r fast_io_fail_tmo)|$(r queue_count)"; '
    'for a in "$c"/nvme*/ana_state; do [ -e "$a" ] || continue; n=${a%%/ana_state}; '
    'echo "ana|${c##*/}|${n##*/}|$(cat "$a" 2>/dev/null)"; done; done; '
    'for s in /sys/class/nvme-subsystem/nvme-subsys*; do [ -e "$s" ] || continue; '
    'echo "subsys|${s##*/}|$(cat "$s/subsysnqn" 2>/dev/null)|$(cat "$s/iopolicy" 2>/dev/null)"; '
    'for n in "$s"/nvme*n*; do [ -e "$n/queue" ] || continue; '
    'echo "ns|${s##*/}|${n##*/}|$(cat "$n/queue/write_cache" 2>/dev/null)|'
    '$(cat "$n/queue/fua" 2>/dev/null)"; '
    "done; done; true"
)
FIELDS = {"ctrl": 10, "ana": 4, "subsys": 4, "ns": 5}
FABRIC = ("rdma", "tcp", "fc")
KERNEL_LOG = (
    "{ if journalctl -k -b -q --no-pager -n 1 >/dev/null 2>&1; then echo '#source journalctl -k -b'; "
    "journalctl -k -b -q --no-pager -o short-monotonic; "
    "elif dmesg >/dev/null 2>&1; then echo '#source dmesg'; dmesg; else echo '#source none'; fi; } "
    "| grep -E '^#source|nvme'"
)
# what a path losing its transport prints (drivers/nvme/host/{core,rdma,tcp,fabrics,multipath}.c)
TRANSPORT_ERRORS = {
    "timeout": r"\btimeout\b|timed out|keep[-_ ]alive",
    "error recovery": r"starting error recovery|reset controller|resetting controller",
    "reconnect failed": r"Failed reconnect attempt|failed to connect|connect(ion)? .*failed|rejected",
    # a controller given up after ctrl_loss_tmo logs "Removing controller..." (tcp.c, rdma.c) before
    # the "Removing ctrl: NQN" every deletion logs, an operator's `nvme disconnect` included
    "controller lost": (
        r"Removing controller|Removing after|ctrl_loss_tmo|controller is down|deleting controller"
    ),
    "transport error": r"for CQE .* failed|WC error|rdma_cm event|address resolution failed|route resolution",
    "no path": r"no usable path|no available path",
    "I/O error": r"I/O error|I/O \d+ .*(QID|qid)",
}
_CTRL = re.compile(r"\bnvme(\d+)(?:c\d+)?(?:n\d+)?\b")


def _rows(text: str) -> list[list[str]]:
    rows = []
    for line in filter(str.strip, text.splitlines()):
        cells = [c.strip() for c in line.split("|")]
        if FIELDS.get(cells[0]) != len(cells):
            raise ParseError(
                "nvme-of sysfs probe", "ctrl|… (10 fields), ana|… (4), subsys|… (4), ns|… (5) lines", line
            )
        rows.append(cells)
    return rows


def parse_timeout(text: str) -> int | str | None:
    """Seconds, the kernel's 'off' (never) as is, None when not reported."""
    if text.strip() == "off":
        return "off"
    value = int_or_none(text)
    return value if value is not None and value >= 0 else None


def _ctrl(row: list[str]) -> dict[str, Any]:
    _, name, transport, address, state, nqn, loss, delay, fast, queues = row
    count = int_or_none(queues)
    return {
        "name": name,
        "transport": transport or None,
        "address": address or None,
        "state": state or None,
        "nqn": nqn or None,
        "ctrl_loss_tmo_s": parse_timeout(loss),
        "reconnect_delay_s": parse_timeout(delay),
        "fast_io_fail_tmo_s": parse_timeout(fast),
        "io_queues": count - 1 if count else None,  # queue_count includes the admin queue
        "paths": [],
    }


def parse_probe(text: str) -> dict[str, Any]:
    """Controllers (with each namespace path's ANA state) and subsystems' I/O policy."""
    rows = _rows(text)
    ctrls = {r[1]: _ctrl(r) for r in rows if r[0] == "ctrl"}
    for _, ctrl, ns, state in (r for r in rows if r[0] == "ana"):
        if ctrl in ctrls:
            ctrls[ctrl]["paths"].append({"namespace": ns, "ana_state": state or None})
    subsystems: dict[str, dict[str, Any]] = {
        r[1]: {"name": r[1], "nqn": r[2], "iopolicy": r[3] or None, "namespaces": []}
        for r in rows
        if r[0] == "subsys"
    }
    for _, subsys, head, cache, fua in (r for r in rows if r[0] == "ns"):
        if subsys in subsystems:
            namespace = {"name": head, "write_cache": cache or None, "fua": {"1": True, "0": False}.get(fua)}
            subsystems[subsys]["namespaces"].append(namespace)
    return {"controllers": list(ctrls.values()), "subsystems": list(subsystems.values())}


def parse_discovery_conf(text: str) -> list[dict[str, str]]:
    """`nvme connect-all` option lines of /etc/nvme/discovery.conf (comments skipped)."""
    entries = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        opts: dict[str, str] = dict(re.findall(r"(?:--|-)([\w-]+)[= ]([^\s]+)", line))
        entries.append(
            {
                "traddr": opts.get("traddr", opts.get("a", "")),
                "transport": opts.get("transport", opts.get("t", "")),
            }
        )
    return entries


def _ports(host: Any) -> list[dict[str, str]]:
    subs = host.get("subsystems", []) if isinstance(host, dict) else []
    out = []
    for sub in subs if isinstance(subs, list) else []:
        ports = sub.get("ports", []) if isinstance(sub, dict) else []
        for port in ports if isinstance(ports, list) else []:
            if isinstance(port, dict):
                out.append(
                    {
                        "nqn": str(sub.get("nqn", "")),
                        "traddr": str(port.get("traddr", "")),
                        "transport": str(port.get("transport", "")),
                    }
                )
    return out


def parse_config_json(text: str) -> list[dict[str, str]]:
    """Subsystem ports of libnvme's /etc/nvme/config.json (a list of hosts, or {"hosts": [...]})."""
    doc = load_json(text, "/etc/nvme/config.json", "libnvme config.json")
    hosts = doc.get("hosts", []) if isinstance(doc, dict) else doc
    if not isinstance(hosts, list):
        raise ParseError("/etc/nvme/config.json", "a list of hosts with subsystems[].ports[]", text)
    return [p for host in hosts for p in _ports(host)]


def _kind(line: str) -> str | None:
    return next((k for k, rx in TRANSPORT_ERRORS.items() if re.search(rx, line, re.IGNORECASE)), None)


def parse_kernel_log(text: str, *, local: frozenset[str] = frozenset()) -> dict[str, Any]:
    """NVMe transport error lines, by kind; lines about local (PCIe) controllers in `local` are left out."""
    source = re.search(r"^#source (.+)$", text, re.MULTILINE)
    if source and source[1] == "none":
        raise ParseError(
            "kernel log", "a readable journalctl -k or dmesg (dmesg_restrict? run with sudo)", text
        )
    errors = []
    for line in text.splitlines():
        kind = _kind(line) if "nvme" in line and not line.startswith("#") else None
        ctrl = _CTRL.search(line)
        if kind and not (ctrl and f"nvme{ctrl[1]}" in local):
            errors.append({"kind": kind, "line": line.strip()})
    counts: dict[str, int] = {}
    for e in errors:
        counts[e["kind"]] = counts.get(e["kind"], 0) + 1
    return {
        "source": source[1] if source else None,
        "errors": len(errors),
        "by_kind": counts,
        "first": [e["line"] for e in errors[:5]],
    }


def _optional(ex: Executor, col: Collected, name: str, command: str) -> str | None:
    """A file or unit that may legitimately be absent: its text, or None without an error."""
    res = run_result(ex, col, name, command, timeout_s=15)
    return res.stdout if res is not None and res.ok else None


def _persistent(ex: Executor, col: Collected) -> dict[str, Any]:
    conf = _optional(ex, col, "discovery.conf", "cat /etc/nvme/discovery.conf")
    cfg = _optional(ex, col, "config.json", "cat /etc/nvme/config.json")
    unit = run_result(
        ex, col, "nvmf-autoconnect", "systemctl is-enabled nvmf-autoconnect.service", timeout_s=15
    )
    return {
        "discovery_conf": guard(col, "discovery.conf", parse_discovery_conf, conf) if conf else [],
        "config_json": guard(col, "config.json", parse_config_json, cfg) if cfg else [],
        "autoconnect": unit.stdout.strip() if unit is not None and unit.stdout.strip() else None,
        "hostnqn": (_optional(ex, col, "hostnqn", "cat /etc/nvme/hostnqn") or "").strip() or None,
    }


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Fabric controllers and paths, persistent connect configuration, kernel-log transport errors."""
    col = Collected()
    parsed = run_parsed(ex, col, "sysfs", parse_probe, PROBE, timeout_s=30)
    if parsed is None:
        return col
    col.facts.update(parsed)
    fabric = [c for c in parsed["controllers"] if c["transport"] in FABRIC]
    if not fabric:
        return col
    col.facts["persistent"] = _persistent(ex, col)
    local = frozenset(c["name"] for c in parsed["controllers"] if c["transport"] not in FABRIC)
    parse = partial(parse_kernel_log, local=local)
    col.facts["kernel_log"] = run_parsed(
        ex, col, "kernel log", parse, KERNEL_LOG, timeout_s=60, sudo=ctx.sudo
    )
    return col
