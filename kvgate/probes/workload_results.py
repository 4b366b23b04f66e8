"""The agent's storage workloads' results (kv-restore, model-load, checkpoint) as measurements.

G2 measures them on each volume and G3's storage verdicts on a candidate and a baseline;
a read that cannot be proven cold carries its reason (kvgate.probes.evidence).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.probes.evidence import Counts
from kvgate.probes.evidence import cold_reason as evidence_cold_reason
from kvgate.probes.nfs_server import ServerCache, ServerCold


def cold_reason(
    cold: dict[str, Any] | None, direct: dict[str, Any], server: ServerCache | None
) -> str | None:
    """Why a read cannot count as cold, from the agent's cold record (probes.agent.cold); None if proven."""
    if not cold or "counts" not in cold:
        return "no cold record"
    if (cold.get("volume") or {}).get(
        "kind"
    ) == "nfs":  # its server's cache: dropped, or outsized by the data
        dropped = cold.get("server_drop")
        if dropped is not None:
            nfs = ServerCold(bool(dropped["controlled"]), str(dropped["how"]))
        else:  # the spec asked for no drop
            nfs = (server or ServerCache("?", None, None)).outsized(
                data_bytes=int(cold["expected_read_bytes"])
            )
        if nfs.reason:
            return nfs.reason
    drop = cold.get("drop_caches") or {}
    why = evidence_cold_reason(
        Counts(**cold["counts"]),
        needed_bytes=int(cold["expected_read_bytes"]),
        what="read",
        caches_dropped=bool(drop.get("done")),
    )
    if why and not drop.get("done"):
        why += f" ({drop.get('error')})"
    if why is None and direct.get("direct_requested") and not direct.get("direct_engaged"):
        why = f"O_DIRECT requested but not engaged: {direct.get('direct_fallback_reason')}"
    return why


def m(metric: str, value: Any, unit: str, evidence: str, reason: str | None = None) -> Measurement:
    return Measurement(metric, value, unit, (evidence,), reason)


def kv_measurements(res: dict[str, Any], ev: str, server: ServerCache | None = None) -> list[Measurement]:
    restores = sorted(res.get("restores", []), key=lambda r: r["readers_per_request"])
    layout = res.get("layout") or {}
    out = [m("kv_restore.corrupt_chunks", sum(r["checksums_failed"] for r in restores), "chunks", ev)]
    if layout.get("requests"):  # the concurrency G2 restored at: the planner scales from it
        out.append(m("kv_restore.requests", layout["requests"], "requests", ev))
    for label, r in (("serial", restores[0]), ("parallel", restores[-1])) if restores else ():
        why = cold_reason(r.get("cold"), r, server)
        out += [
            m(f"kv_restore.{label}.read_bw_bytes_per_s", r["restore_bytes_per_s"], "B/s", ev, why),
            m(f"kv_restore.{label}.latency_p50_s", r["restore_latency_p50_s"], "s", ev, why),
            m(f"kv_restore.{label}.latency_p99_s", r["restore_latency_p99_s"], "s", ev, why),
            m(f"kv_restore.{label}.readers_per_request", r["readers_per_request"], "", ev),
        ]
        if layout.get("request_bytes") and r["restore_latency_p50_s"]:
            per_request = layout["request_bytes"] / r["restore_latency_p50_s"]  # one request's bandwidth
            out.append(m(f"kv_restore.{label}.request_bytes_per_s", per_request, "B/s", ev, why))
    return out


def model_load_measurements(
    res: dict[str, Any], ev: str, server: ServerCache | None = None
) -> list[Measurement]:
    loads = [x for x in res.get("loads", []) if x.get("status") == "ok"]
    out = [m("model_load.corrupt_cells", sum(x["checksums_failed"] for x in loads), "cells", ev)]
    for x in loads:
        why = cold_reason(x.get("cold"), x, server)
        out.append(m(f"model_load.{x['loader']}.read_bw_bytes_per_s", x["read_bytes_per_s"], "B/s", ev, why))
        out.append(m(f"model_load.{x['loader']}.elapsed_s", x["elapsed_s"], "s", ev, why))
    return out


def checkpoint_measurements(
    res: dict[str, Any], ev: str, server: ServerCache | None = None
) -> list[Measurement]:
    write, back = res["write"], res["readback"]
    return [
        m("checkpoint.write_bw_bytes_per_s", write["write_bytes_per_s"], "B/s", ev),
        m("checkpoint.write_s", write["elapsed_s"], "s", ev),
        m(
            "checkpoint.readback_bw_bytes_per_s",
            back["read_bytes_per_s"],
            "B/s",
            ev,
            cold_reason(back.get("cold"), back, server),
        ),
        m("checkpoint.corrupt_shards", back["checksums_failed"], "shards", ev),
    ]


TO_MEASUREMENTS: dict[str, Callable[[dict[str, Any], str, ServerCache | None], list[Measurement]]] = {
    "kv-restore": kv_measurements,
    "model-load": model_load_measurements,
    "checkpoint": checkpoint_measurements,
}
