"""How many bytes a workload reads back cold, from its spec as the workload itself parses it.

The controller asks before a run (``kvgate preflight``: can an NFS server's cache be defeated for
this read?), so the figure comes from the same parsing the workload does on the host.
"""

from __future__ import annotations

from typing import Any

from kvgate.probes.agent import checkpoint, kv_restore, model_load


def cold_read_bytes(workload: str, data: Any) -> int:
    """Bytes ``workload`` (kv-restore, model-load, checkpoint) writes and then reads back cold."""
    if workload == "kv-restore":
        return kv_restore.parse(data)[1].total_bytes
    if workload == "model-load":
        return int(model_load.parse(data)["model_bytes"])
    if workload == "checkpoint":
        return int(checkpoint.parse(data)["snapshot_bytes"])
    raise ValueError(f"unknown workload {workload!r}")
