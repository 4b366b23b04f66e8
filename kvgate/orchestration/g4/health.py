"""Device health and the kernel during a soak: snapshots at its start, every hour and at its end.

A snapshot (one JSON artifact each, ``g4/<deployment>/health/<unix s>.json``, so a resumed run
judges the ones an earlier controller took) holds G1's NVMe facts (``nvme smart-log`` of each
local drive: media and data-integrity errors, critical warning, temperature, percentage used,
error-log entries), G1's NVMe-oF facts (each path's controller and ANA state) and the NICs'
pause, CNP, discard and out-of-buffer counters. Each is judged as a delta from the first
snapshot to the last (the warning and temperature: their worst), against the G4 profile's
``health`` limits. A host without the device or the counter makes its check SKIP, naming what
was missing. The kernel log of the soak's window (journal, else dmesg) is kept line by line,
with its time and the soak window it fell in.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.probes.facts import FAMILIES, HostContext, kernel_window, nic_counters
from kvgate.transport import Executor

Window = dict[str, Any]
SMART = ("media_errors", "critical_warning", "temperature_c", "percentage_used", "error_log_entries")
NIC_KINDS = ("pause", "cnp", "discard", "out_of_buffer")
# check key -> (metric, unit)
KEYS = {
    "nvme-media-errors": ("nvme_media_errors_delta", "errors"),
    "nvme-critical-warning": ("nvme_critical_warning_max", "bits"),
    "nvme-temperature": ("nvme_temperature_max_c", "°C"),
    "nvme-wear": ("nvme_percentage_used_delta", "%"),
    "nvme-error-log": ("nvme_error_log_entries_delta", "entries"),
    "nic-pause": ("nic_pause_frames_delta", "frames"),
    "nic-cnp": ("nic_cnp_delta", "packets"),
    "nic-discard": ("nic_discards_delta", "packets"),
    "nic-out-of-buffer": ("nic_out_of_buffer_delta", "packets"),
    "paths": ("multipath_path_changes", "changes"),
    "kernel-log": ("kernel_log_lines", "lines"),
}


def snapshot(ex: Executor, *, host: str, sudo: bool) -> dict[str, Any]:
    """NVMe SMART, NVMe-oF paths and NIC counters now; what could not be read is said, not raised."""
    ctx = HostContext(host=host, volumes={}, sudo=sudo)
    out: dict[str, Any] = {"time_unix_s": time.time()}
    nvme = FAMILIES["nvme"](ex, ctx)  # G1's collectors, as they are
    drives = [d for d in nvme.facts.get("devices", []) if d.get("local") and isinstance(d.get("smart"), dict)]
    out["smart"] = {(d.get("serial") or d["name"]): {k: d["smart"].get(k) for k in SMART} for d in drives}
    out["nvme_said"] = "; ".join([*nvme.missing_tools, *nvme.errors.values()])[:300]
    fabric = FAMILIES["nvmeof"](ex, ctx)
    out["paths"] = {
        f"{c['name']}/{p['namespace']}": f"{c['state']}/{p['ana_state']}"
        for c in fabric.facts.get("controllers", [])
        for p in c["paths"] or [{"namespace": "-", "ana_state": None}]
    }
    try:
        out["nic"] = nic_counters(ex)["totals"]
    except Exception as exc:  # a missing ethtool or an unreadable sysfs: no counters, said
        out["nic"], out["nic_said"] = {}, f"{type(exc).__name__}: {exc}"[:300]
    return out


def stored(run_dir: Path, host: str, deployment: str) -> list[dict[str, Any]]:
    """The snapshots a run took of one deployment's soak, oldest first."""
    folder = run_dir / "artifacts" / host / "g4" / deployment / "health"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def artifact_name(deployment: str, snap: dict[str, Any]) -> str:
    return f"g4/{deployment}/health/{snap['time_unix_s']:014.3f}.json"


def kernel(ex: Executor, *, since: float, until: float, sudo: bool) -> dict[str, Any]:
    """The kernel log lines of the soak's window, or why they could not be read."""
    try:
        return kernel_window(ex, since=since, until=until, sudo=sudo)
    except Exception as exc:  # unreadable: the kernel-log check is INVALID with this reason
        return {"error": f"{type(exc).__name__}: {exc}"[:300], "since_unix_s": since, "until_unix_s": until}


def with_windows(log: dict[str, Any], windows: Sequence[Window]) -> dict[str, Any]:
    """Each kernel line with the soak window it fell in (None: between windows)."""
    lines = [
        line
        | {
            "window": next(
                (w["index"] for w in windows if w["start_unix_s"] <= line["time_unix_s"] <= w["end_unix_s"]),
                None,
            )
        }
        for line in log.get("lines", [])
    ]
    return log | {"lines": lines}


def judged(snaps: list[dict[str, Any]], log: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(each check key's value, or None; why a check has nothing to judge) over the snapshots."""
    values: dict[str, Any] = {}
    said: dict[str, str] = {}
    first, last = (snaps[0], snaps[-1]) if snaps else ({}, {})
    drives = sorted(set(first.get("smart", {})) & set(last.get("smart", {})))
    if not drives:
        why = first.get("nvme_said") or "no local NVMe drive with a SMART log"
        for key in [k for k in KEYS if k.startswith("nvme-")]:
            said[key] = f"no NVMe drive to read: {why}"
    else:
        every = [s["smart"][d] for s in snaps for d in drives if d in s["smart"]]
        values["nvme-media-errors"] = _delta(first, last, drives, "media_errors")
        values["nvme-critical-warning"] = max(int(x["critical_warning"] or 0) for x in every)
        values["nvme-temperature"] = max(float(x["temperature_c"] or 0) for x in every)
        values["nvme-wear"] = _delta(first, last, drives, "percentage_used")
        values["nvme-error-log"] = _delta(first, last, drives, "error_log_entries")
    for kind in NIC_KINDS:
        key = "nic-" + kind.replace("_", "-")
        if kind in first.get("nic", {}) and kind in last.get("nic", {}):
            values[key] = last["nic"][kind] - first["nic"][kind]
        else:
            said[key] = f"no {kind.replace('_', '-')} counter on this host (ethtool -S, RDMA hw_counters)"
            said[key] += f": {first['nic_said']}" if first.get("nic_said") else ""
    if any(s.get("paths") for s in snaps):
        values["paths"] = _path_changes(snaps)
    else:
        said["paths"] = "no NVMe-oF controller: no multipath path to follow"
    if "error" not in log:
        values["kernel-log"] = len(log.get("lines", []))
    return values, said


def gaps(ex: Executor, *, host: str, sudo: bool) -> dict[str, str]:
    """Why each health check would have nothing to judge on this host, from one snapshot taken now and
    the last minute of its kernel log (what preflight forecasts of G4)."""
    now = time.time()
    log = kernel(ex, since=now - 60, until=now, sudo=sudo)
    _, said = judged([snapshot(ex, host=host, sudo=sudo)], log)
    if "error" in log:
        said["kernel-log"] = f"the kernel log cannot be read: {log['error']}"
    return said


def _delta(first: dict[str, Any], last: dict[str, Any], drives: list[str], field: str) -> int | None:
    pairs = [(first["smart"][d].get(field), last["smart"][d].get(field)) for d in drives]
    known = [(a, b) for a, b in pairs if a is not None and b is not None]
    return sum(b - a for a, b in known) if known else None


def _path_changes(snaps: list[dict[str, Any]]) -> int:
    """Paths whose state differs from the previous snapshot's, or that appeared or vanished."""
    changes = 0
    for before, after in itertools.pairwise(snaps):
        keys = set(before["paths"]) | set(after["paths"])
        changes += sum(1 for k in keys if before["paths"].get(k) != after["paths"].get(k))
    return changes


def figures(
    snaps: list[dict[str, Any]], log: dict[str, Any], values: dict[str, Any], said: dict[str, str]
) -> dict[str, Any]:
    """The health block of ``g4_rows`` (kvgate.record.HealthFigures)."""
    return {
        "snapshots": len(snaps),
        "first_unix_s": snaps[0]["time_unix_s"] if snaps else None,
        "last_unix_s": snaps[-1]["time_unix_s"] if snaps else None,
        "values": {k: values.get(k) for k in KEYS},
        "skipped": said,
        "kernel_source": log.get("source"),
        "kernel_error": log.get("error", ""),
        "kernel_since_unix_s": float(log["since_unix_s"]),
        "kernel_until_unix_s": float(log["until_unix_s"]),
        "kernel_lines": log.get("lines", []),
    }


def measurements(
    values: dict[str, Any], log: dict[str, Any], evidence: tuple[str, ...], said: dict[str, str]
) -> dict[str, Measurement]:
    """Every health check's measurement; the kernel log's INVALID when it could not be read."""
    out = {}
    for key, (metric, unit) in KEYS.items():
        invalid = log.get("error") if key == "kernel-log" else None
        if key not in values and not invalid:
            invalid = "nothing to read on this host" if key in said else "not measured"
        out[key] = Measurement(metric, values.get(key), unit, evidence, invalid)
    return out


def limits(profile: G4Profile) -> dict[str, float]:
    """The profile's limit for every check key."""
    h = profile.health
    return {
        "nvme-media-errors": h.max_media_errors,
        "nvme-critical-warning": 0,
        "nvme-temperature": h.max_temperature_c,
        "nvme-wear": h.max_percentage_used_increase,
        "nvme-error-log": h.max_error_log_entries,
        "nic-pause": h.max_pause_frames,
        "nic-cnp": h.max_cnp,
        "nic-discard": h.max_discards,
        "nic-out-of-buffer": h.max_out_of_buffer,
        "paths": h.max_path_changes,
        "kernel-log": h.max_kernel_log_lines,
    }
