"""`kvgate stop RUN`: end a detached G4 soak early.

The soak's agent job (recorded in run.json ``g4_jobs`` before the first poll) gets
SIGTERM: it ends its window, stops the engines it soaks and writes its result.
``kvgate run g4 --resume RUN`` then collects the windows and judges them; the
coverage check fails with "the soak ended: cancelled", as a shortened soak must.
"""

from __future__ import annotations

from pathlib import Path

from kvgate import agentctl
from kvgate.errors import StoreError, UsageError
from kvgate.inventory import load
from kvgate.store import RunStore
from kvgate.transport import connect

STOP_GRACE_S = 90.0  # the agent stops its engines first: SIGTERM, then SIGKILL after 15 s each


def stop_soak(run_dir: Path) -> dict[str, str]:
    """Cancel every soak job of the run; per ``host/deployment``: "stopped" or "had already ended"."""
    meta = RunStore.open(run_dir).meta()
    jobs = meta.get("g4_jobs") or {}
    if meta.get("gate") != "g4" or not jobs:
        raise UsageError(f"{run_dir}: no G4 soak was started in this run (run.json has no g4_jobs)")
    inv = load(meta["inventory"]["path"]).inventory
    out = {}
    for key, state in sorted(jobs.items()):
        host = key.split("/", 1)[0]
        try:
            job = agentctl.RemoteJob(**state["job"])
            ex = connect(host, inv.hosts[host])
        except (KeyError, TypeError) as exc:
            raise StoreError(
                f"{run_dir / 'run.json'}: g4_jobs.{key} names no job of this inventory ({exc})"
            ) from None
        try:
            stopped = agentctl.cancel(ex, job, grace_s=STOP_GRACE_S)
        finally:
            ex.close()
        out[key] = "stopped" if stopped else "had already ended"
    return out
