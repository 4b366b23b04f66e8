"""`kvgate stop RUN`: end a detached G4 soak early.

The soak's agent job (recorded in run.json ``g4_jobs`` before the first poll) gets
SIGTERM: it drops the window in progress, stops the engines it soaks and writes
its result.
``kvgate run g4 --resume RUN`` then collects the windows and judges them; the
coverage check fails with "the soak ended: cancelled", as a shortened soak must.
"""

from __future__ import annotations

from pathlib import Path

from kvgate.base.errors import LabError, StoreError, UsageError
from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.g4.soak import ENGINE_STOP_S
from kvgate.probes import agentctl
from kvgate.record import RunStore, utc_now, verify_manifest, write_manifest
from kvgate.transport import connect


def stop_soak(run_dir: Path) -> dict[str, str]:
    """Cancel every soak job of the run; per ``host/deployment``: what happened to it.

    Every job is tried; a host that cannot be reached is reported, and after all
    the others were stopped, the first such error is raised (exit 3).
    """
    store = RunStore.open(run_dir)
    record = store.run_record()
    jobs = record.g4_jobs
    if record.gate != "g4" or not jobs:
        raise UsageError(f"{run_dir}: no G4 soak was started in this run (run.json has no g4_jobs)")
    inv = load_config(store.inventory_path()).inventory.inventory
    intact = verify_manifest(run_dir).status == "verified"
    store.update_meta(g4_stopped=utc_now())  # a resume starts no deployment that had not started
    if intact:  # kvgate's own change to a run still as sealed: sealed again, so --resume accepts it
        write_manifest(run_dir)
    out: dict[str, str] = {}
    failed: list[LabError] = []
    for key, state in sorted(jobs.items()):
        host = key.split("/", 1)[0]
        try:
            job = agentctl.RemoteJob(**state.job.model_dump())
            ex = connect(host, inv.hosts[host])
        except (KeyError, TypeError) as exc:
            raise StoreError(
                f"{run_dir / 'run.json'}: g4_jobs.{key} names no job of this inventory ({exc})"
            ) from None
        try:
            out[key] = "stopped" if agentctl.cancel(ex, job, grace_s=ENGINE_STOP_S) else "had already ended"
        except LabError as exc:
            out[key] = f"NOT stopped: {exc}"
            failed.append(exc)
        finally:
            ex.close()
    if failed:
        raise LabError("; ".join(f"{k}: {v}" for k, v in out.items()))
    return out
