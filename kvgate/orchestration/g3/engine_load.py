"""R9 by the real engine: a cold start from one volume, timed to a ready endpoint (service load).

The seed's R9 is service load (服务加载: DeepSeek-32B 691 s → 112 s, 70B 1399 s → 150 s on
Ascend, against NFS): the time from launch to an endpoint that answers, which is what G3
judges (``ready_s``). The profile's ``weights_log`` pattern finds the weight-load time in
the engine's log (vLLM: "Loading weights took N seconds"), shown beside it: weights only.
The page cache is dropped first (and on NFS the server's, :mod:`kvgate.probes.nfs_server`), so
every byte comes from the volume under test.

Two sources of an engine to start:

- a deployment (``engines:``): its recompute profile (the same engine, no tier to set up)
  as its first instance (environment, ``engine_args``), on the tiny model (copied by kvgate
  into the work directory) or the deployment's ``model_copies.<volume>``;
- a model load (``model_loads:``, R9's own models on R9's platform): its profile, environment,
  arguments and its copy on each volume. kvgate does not copy tens of GB of weights itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from kvgate.base.criteria import Measurement
from kvgate.base.errors import Interrupted, LabError, TransportError
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gateconfig import GateConfig
from kvgate.probes.engines import EngineService, Placement, engine_python, stage_model
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.nfs_server import ServerCache
from kvgate.record import RunStore
from kvgate.transport import Executor


@dataclass(frozen=True)
class ColdStart:
    """One engine started cold from a model copy, and where its numbers go (``<key>.ready_s``)."""

    key: str  # "engine" (a deployment's) or "service[<model load>]"
    profile: EngineProfile
    python: str
    model: str
    port: int
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()


def _status(key: str, reason: str, evidence: tuple[str, ...] = ()) -> dict[str, Measurement]:
    return {f"{key}.status": Measurement("status", None, "", evidence, reason)}


@dataclass(frozen=True)
class ColdSite:
    """Where an engine is started cold: its host, the volume its model is read from, a work
    directory there, the run store, and the volume's NFS server cache (None: not on NFS)."""

    ex: Executor
    host: str  # as the inventory names it
    sudo: bool
    volume: str
    work: str
    store: RunStore
    server: ServerCache | None = None
    label: str = ""  # which start this is (warm-up, start-0, …): its run directory and artifact


def engine_load(site: ColdSite, config: GateConfig, *, candidate: str) -> dict[str, Measurement]:
    """Cold-start the engine of the first deployment on ``candidate`` with its model on the site's volume."""
    host, volume, inv = site.host, site.volume, config.inventory.inventory
    found = [(n, d) for n, d in inv.engines.items() if d.volume == candidate and host in inv.engine_hosts(n)]
    if not found:
        return _status("engine", f"no engine deployment on {host} uses volume {candidate}")
    name, dep = found[0]
    profile = config.engine(dep.recompute_profile)
    python = engine_python(inv.hosts[host], dep)
    if dep.model == "tiny":
        staged, _ = stage_model(site.ex, inv.hosts[host], dep, profile, python)
        model = f"{site.work}/model"  # copied once: every start reads the same copy
        site.ex.run("test -e %s || cp -r %s %s", model, staged, model, timeout_s=600, check=True)
    elif volume in dep.model_copies:
        model = dep.model_copies[volume]
    else:
        return _status("engine", f"engines.{name}.model_copies has no copy of the model on volume {volume}")
    start = ColdStart(
        "engine", profile, python, model, dep.engine_port(1), dep.instance_envs[0], dep.engine_args
    )
    return start_cold(site, start)


def service_load(site: ColdSite, config: GateConfig, *, name: str) -> dict[str, Measurement]:
    """Cold-start model load ``name`` (``model_loads:``) from its copy on the site's volume."""
    ml, key = config.inventory.inventory.model_loads[name], f"service[{name}]"
    profile = config.engine(ml.profile)
    python = ml.python or "python3"
    start = ColdStart(key, profile, python, ml.copies[site.volume], ml.port, ml.env, ml.engine_args)
    return start_cold(site, start)


def start_cold(site: ColdSite, start: ColdStart) -> dict[str, Measurement]:
    """Drop the page cache (and an NFS server's), start the engine until ready, stop it; its times."""
    ex, volume, store, server = site.ex, site.volume, site.store, site.server
    drop = HostEvidence(ex, sudo=site.sudo).drop()
    nfs = server.make_cold(data_bytes=_bytes_of(ex, start.model)) if server else None
    slug = start.key.replace("[", "-").rstrip("]")  # service[deepseek-32b] → service-deepseek-32b
    slug += f"-{site.label}" if site.label else ""
    run_dir, cache_dir = f"{site.work}/{slug}-run", f"{site.work}/{slug}-cache"
    where = Placement(run_dir, start.model, cache_dir, port=start.port, python=start.python)
    eng = EngineService(ex, start.profile, where, env=start.env, args=start.args)
    try:
        with eng:
            pass
    except (TransportError, Interrupted):
        raise  # the link or the run ended, not the engine: unevaluated, retried by --resume
    except LabError as exc:
        if eng.record is None:
            return _status(start.key, f"the engine did not start from {volume}: {exc}")
        raise  # it started, but stopping it failed (processes left): a lab error, not a measurement
    record = eng.record
    assert record is not None  # __enter__ returned: the engine was ready
    doc = {
        **record.model_dump(),
        "drop_caches": drop.how,
        "model": start.model,
        "nfs_server_cache": nfs and nfs.how,
    }
    name = f"g3/storage/{volume}/{slug}-load.json"
    ev = (store.artifact(ex.host, name, json.dumps(doc, indent=1)),)
    reasons = [
        None if drop.dropped else f"page cache not dropped ({drop.how}): not a cold load",
        nfs and nfs.reason,
    ]
    reason = "; ".join(r for r in reasons if r) or None
    key = start.key
    found = {f"{key}.ready_s": Measurement(f"{key}.ready_s", record.ready_s, "s", ev, reason)}
    if record.weights_load_s is not None:
        weights = Measurement(f"{key}.weights_load_s", record.weights_load_s, "s", ev, reason)
        found[weights.metric] = weights
    else:
        why = f"{start.profile.name} does not log its weight-load time (weights_log)"
        found[f"{key}.weights_load_s"] = Measurement(f"{key}.weights_load_s", None, "s", ev, why)
    return found


def _bytes_of(ex: Executor, model: str) -> int:
    """The model's bytes on the volume (links followed): what an NFS server's cache would have to hold."""
    return int(ex.run("du -sbL %s", model, timeout_s=300, check=True).stdout.split()[0])
