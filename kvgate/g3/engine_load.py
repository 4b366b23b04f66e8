"""R9 by the real engine: weight-load time of a cold start from one volume, read from the engine's log.

The engine (the deployment's recompute profile: the same engine, no tier to set up)
starts on a model copy that lies on the volume under test, right after the page
cache was dropped; the profile's ``weights_log`` pattern finds the weight-load time
in its log (vLLM: "Loading weights took N seconds"), separated from the rest of
start-up (``ready_s``). It runs as the deployment's first instance: that instance's
environment (e.g. its GPU group) and the deployment's ``engine_args``. The model
copy on each volume is the tiny model (copied by kvgate into its work directory)
or, for a lab model, the deployment's ``model_copies.<volume>``: kvgate does not
copy tens of GB of weights by itself.
"""

from __future__ import annotations

import json

from kvgate.engines import EngineService, Placement
from kvgate.engines.profile import PROFILE_DIR, load_profile
from kvgate.errors import LabError
from kvgate.g3.measure import engine_python, stage_model
from kvgate.hostevidence import HostEvidence
from kvgate.inventory.schema import Inventory
from kvgate.judge import Measurement
from kvgate.store import RunStore
from kvgate.transport.base import Executor


def _status(reason: str, evidence: tuple[str, ...] = ()) -> dict[str, Measurement]:
    return {"engine.status": Measurement("status", None, "", evidence, reason)}


def engine_load(
    ex: Executor, inv: Inventory, *, host: str, candidate: str, volume: str, work: str, store: RunStore
) -> dict[str, Measurement]:
    """Cold-start the engine of the first deployment on ``candidate`` with its model on ``volume``."""
    found = [(n, d) for n, d in inv.engines.items() if d.volume == candidate and host in inv.engine_hosts(n)]
    if not found:
        return _status(f"no engine deployment on {host} uses volume {candidate}")
    name, dep = found[0]
    profile = load_profile(PROFILE_DIR / f"{dep.recompute_profile}.yaml")
    if profile.weights_log is None:
        return _status(f"{profile.name} does not log its weight-load time (no weights_log in its profile)")
    python = engine_python(inv.hosts[host], dep)
    if dep.model == "tiny":
        staged, _ = stage_model(ex, inv.hosts[host], dep, profile.kind, python)
        model = f"{work}/model"
        ex.run("cp -r %s %s", staged, model, timeout_s=600, check=True)
    elif volume in dep.model_copies:
        model = dep.model_copies[volume]
    else:
        return _status(f"engines.{name}.model_copies has no copy of the model on volume {volume}")
    drop = HostEvidence(ex, sudo=inv.hosts[host].sudo).drop()
    where = Placement(run_dir=f"{work}/engine-run", model=model, cache_dir=f"{work}/engine-cache",
                      port=dep.port + 1, python=python)  # fmt: skip
    eng = EngineService(ex, profile, where, env=dep.instance_envs[0], args=dep.engine_args)
    try:
        with eng:
            pass
    except LabError as exc:
        if eng.record is None:
            return _status(f"the engine did not start from {volume}: {exc}")
        raise  # it started, but stopping it failed (processes left): a lab error, not a measurement
    record = eng.record
    assert record is not None  # __enter__ returned: the engine was ready
    doc = {**record.to_dict(), "drop_caches": drop.how, "model": model}
    ev = (store.artifact(ex.host, f"g3/storage/{volume}/engine-load.json", json.dumps(doc, indent=1)),)
    reason = None if drop.dropped else f"page cache not dropped ({drop.how}): not a cold load"
    if record.weights_load_s is None:
        return _status(f"{profile.name} started but its log has no weight-load time", ev)
    return {
        "engine.weights_load_s": Measurement("engine.weights_load_s", record.weights_load_s, "s", ev, reason),
        "engine.ready_s": Measurement("engine.ready_s", record.ready_s, "s", ev, reason),
    }
