"""The integrity load beside a deployment's soak: started, followed, and turned into G4's figures.

It runs on the engine host as its own agent job (kvgate.probes.agent.integrity), in a scratch
directory of the deployment's work directory on the candidate volume, and follows the soak's
job: it ends after the cycle in progress once the soak has ended. Its job is recorded in
run.json (``g4_jobs.<key>.integrity``) beside the soak's, so ``--resume`` reattaches to both.
A failure is kept once per place (kind, file, offset), with the first time it was seen and
the soak windows it was seen in.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.base.errors import CommandTimeout, LabError, TransportError
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.probes import agentctl
from kvgate.probes.scratch import ScratchDir, create

Window = dict[str, Any]
CELL_BYTES = 1 << 20  # the checkpoint's and KV chunks' verification unit (a chunk smaller: its size)
LOST_CONTACT_S = 900.0


def spec(profile: G4Profile, *, soak_state_dir: str, duration_s: float) -> dict[str, Any]:
    """The agent's integrity spec: the profile's sizes and share, following the soak's job."""
    i = profile.integrity
    return {
        "run_id": secrets.token_hex(4),
        "seed": secrets.randbits(31),
        "io_bytes": min(CELL_BYTES, i.kv_chunk_bytes, i.checkpoint_bytes),
        "checksum": i.checksum,
        "direct": True,
        "duration_s": int(duration_s),
        "cycle_s": i.cycle_s,
        "follow_state_dir": soak_state_dir,
        "rate_bytes_per_s": i.max_bytes_per_s,
        "fio_bytes": i.fio_bytes,
        "fio_block_bytes": i.fio_block_bytes,
        "checkpoint_bytes": i.checkpoint_bytes,
        "kv_chunk_bytes": i.kv_chunk_bytes,
        "kv_chunks": i.kv_chunks,
    }


def start(ex: Any, target: ScratchDir, spec_: dict[str, Any], *, python: str) -> agentctl.RemoteJob:
    """Create the checked directory and start the integrity job in it."""
    create(ex, target, fresh=True)
    return agentctl.start(ex, "integrity", spec_, python=python, target=target)


@dataclass
class Followed:
    """What the integrity job reported: its cycles, its result, or why it could not be followed."""

    cycles: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def follow(
    ex: Any, job: agentctl.RemoteJob | None, *, timeout_s: float, poll_s: float, why: str = ""
) -> Followed:
    """Wait for the job (it ends once the soak has); an agent that broke is said, not raised."""
    out = Followed(error=why if job is None else "")
    if job is None:
        return out
    seen: set[int] = set()

    def on_event(event: dict[str, Any]) -> None:
        if event.get("event") == "cycle" and event["index"] not in seen:
            seen.add(event["index"])
            out.cycles.append(event)

    try:
        out.result = agentctl.wait(
            ex, job, on_event, timeout_s=timeout_s, interval_s=poll_s, tolerate_s=LOST_CONTACT_S
        )
    except agentctl.JobOverran:
        agentctl.cancel(ex, job)
        out.error = f"the integrity load overran {timeout_s:.0f} s and was cancelled"
    except (TransportError, CommandTimeout):
        raise
    except LabError as exc:
        out.error = f"the integrity agent broke: {exc}"
    if out.result and out.result.get("status") not in ("ok", None):
        out.error = f"the integrity load ended {out.result.get('status')}: {out.result.get('error')}"
    return out


def window_of(t: float, windows: Sequence[Window]) -> int | None:
    """The soak window whose span holds unix time ``t``."""
    return next((int(w["index"]) for w in windows if w["start_unix_s"] <= t <= w["end_unix_s"]), None)


def failures(cycles: list[dict[str, Any]], windows: Sequence[Window], volume: str) -> list[dict[str, Any]]:
    """Every failure once per place, with when it was first seen, how often, and in which windows."""
    places: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c in cycles:
        for f in c["failures"]:
            key = (f["kind"], f["file"], f["offset_bytes"])
            w = window_of(f["time_unix_s"], windows)
            if key not in places:
                places[key] = {
                    "kind": f["kind"],
                    "source": f["source"],
                    "volume": volume,
                    "file": f["file"],
                    "offset_bytes": f["offset_bytes"],
                    "length_bytes": f["length_bytes"],
                    "first_seen_unix_s": float(f["time_unix_s"]),
                    "windows": [],
                    "times_seen": 0,
                    "detail": f["detail"],
                }
            place = places[key]
            place["times_seen"] += 1
            if w is not None and w not in place["windows"]:
                place["windows"].append(w)
    return sorted(places.values(), key=lambda p: p["first_seen_unix_s"])


def figures(followed: Followed, windows: Sequence[Window], *, volume: str, share: int) -> dict[str, Any]:
    """The integrity block of ``g4_rows`` (kvgate.record.IntegrityFigures), all numbers."""
    cyc = followed.cycles
    span = cyc[-1]["end_unix_s"] - cyc[0]["start_unix_s"] if cyc else 0.0
    dev = [(w.get("device_read_bytes"), w.get("device_write_bytes")) for w in windows]
    known = [r + w for r, w in dev if r is not None and w is not None]
    fio = [p for c in cyc for p in c["fio"].values()]
    return {
        "volume": volume,
        "cycles": len(cyc),
        "share_bytes_per_s": share,
        "io_bytes": int(sum(c["io_bytes"] for c in cyc)),
        "span_s": float(span),
        "device_bytes": int(sum(known)) if known and len(known) == len(dev) else None,
        "cpu_s": float(followed.result["cpu_s"]) if "cpu_s" in followed.result else None,
        "verified_bytes": int(
            sum(c["checkpoint"]["verified_bytes"] + c["kv"]["verified_bytes"] for c in cyc)
        ),
        "fio_verified_bytes": int(sum(p["read_bytes"] or 0 for p in fio)),
        "failures": failures(cyc, windows, volume),
        "error": followed.error,
    }


def measurements(fig: dict[str, Any], evidence: tuple[str, ...]) -> dict[str, Measurement]:
    """``integrity``: places that read back wrong; ``integrity-reads``: places that could not be read."""
    invalid = None
    if not fig["cycles"]:
        invalid = fig["error"] or "the integrity load completed no cycle"
    bad = [f for f in fig["failures"] if f["kind"] == "mismatch"]
    io = [f for f in fig["failures"] if f["kind"] != "mismatch"]
    return {
        "integrity": Measurement(
            "integrity_mismatches", None if invalid else len(bad), "places", evidence, invalid
        ),
        "integrity-reads": Measurement(
            "integrity_io_errors", None if invalid else len(io), "places", evidence, invalid
        ),
    }


def details(fig: dict[str, Any], host: str) -> dict[str, str]:
    """The first failure of each kind, named by host, volume, file, offset and time."""
    out = {}
    for key, kinds in (
        ("integrity", ("mismatch",)),
        ("integrity-reads", ("read-error", "write-error", "fio-error")),
    ):
        found = [f for f in fig["failures"] if f["kind"] in kinds]
        if found:
            out[key] = f"{len(found)} place(s); first: {place(found[0], host)}"
        elif fig["error"]:
            out[key] = fig["error"]
    return out


def place(f: dict[str, Any], host: str) -> str:
    """``host H, volume V: mismatch in FILE at offset N, first seen T (window W)``."""
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(f["first_seen_unix_s"]))
    windows = f" (window {f['windows'][0]})" if f["windows"] else ""
    offset = "" if f["offset_bytes"] is None else f" at offset {f['offset_bytes']}"
    return (
        f"host {host}, volume {f['volume']}: {f['kind']} in {f['file']}{offset}, first seen {when}{windows}"
    )
