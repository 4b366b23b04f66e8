"""Every engine launch G3 makes for one deployment, once per distinct launch (what preflight starts).

G3 starts, per deployment and host (:mod:`kvgate.orchestration.g3.protocol`'s phases): the tier
probe and the tier trials (the tier profile, first instance), the recompute engine (port slot 1),
R1's readers (their placement and model), the capacity arms (dram-only, ssd-tier: the capacity
placement, and one per instance on the whole machine) and R2/R3's volume arms (the SSD tier with
the gate profile's engine settings, likewise). Two arms with the same profile, port slot,
environment, arguments and model are one launch: preflight starts each launch once, so an engine
that cannot start is found in minutes, not hours into G3. The volume arms start with their tier
on the candidate's work directory here: their launch differs from G3's only in that directory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kvgate.base.errors import Interrupted, LabError, TransportError
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import VOLUME_ARMS
from kvgate.configuration.gateconfig import GateConfig
from kvgate.orchestration.g3.context import DeploymentContext
from kvgate.orchestration.g3.measure import StoreSink, deployment_setup, remove_work_dir
from kvgate.orchestration.g3.plan import capacity_profiles, cold_read_blocker, read_profiles
from kvgate.orchestration.g3.volumes import ssd_tier_profile
from kvgate.probes import scratch
from kvgate.probes.engines import EngineService, Placement
from kvgate.record import EngineLaunch, RunStore
from kvgate.transport import Executor

PROBE = "probe"  # the tier probe's launch: preflight's engine[<dep>].start already starts it


@dataclass(frozen=True)
class Launch:
    """One engine launch of a G3 arm: profile, port slot, environment, arguments, model."""

    arm: str  # the first arm (and instance) that launches it, e.g. "dram-only", "ssd-tier#1"
    profile: EngineProfile
    slot: int  # the deployment's port slot (kvgate.configuration.inventory.engine_port)
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    model: str | None = None  # None: the deployment's model

    @property
    def key(self) -> tuple[object, ...]:
        return (self.profile.name, self.slot, self.env, self.args, self.model)


def launches(config: GateConfig, name: str) -> list[Launch]:
    """The distinct launches G3 makes for deployment ``name``, in G3's order; the first is the probe's."""
    dep = config.inventory.inventory.engines[name]
    tier, env, args = config.engine(dep.tier_profile), dep.instance_envs[0], dep.engine_args
    out = [
        _launch(PROBE, tier, 0, env, args),
        _launch("recompute", config.engine(dep.recompute_profile), 1, env, args),
        *_reader_launches(config, name),
        *_capacity_launches(config, name),
        *_volume_launches(config, name),
    ]
    distinct: dict[tuple[object, ...], Launch] = {}
    for launch in out:
        distinct.setdefault(launch.key, launch)
    return list(distinct.values())


def _placement(config: GateConfig, name: str) -> tuple[dict[str, str], tuple[str, ...]]:
    """The capacity levels' environment and arguments (default: the first instance's), as G3 sets them up."""
    dep = config.inventory.inventory.engines[name]
    at = dep.capacity
    return (at.env, at.engine_args) if at else (dep.instance_envs[0], dep.engine_args)


def _reader_launches(config: GateConfig, name: str) -> list[Launch]:
    """R1's readers (kvgate.orchestration.g3.cold_read), where G3 runs them."""
    cr = config.inventory.inventory.engines[name].cold_read
    if cr is None:
        return []
    readers = read_profiles(config.inventory.inventory.engines[name], profiles=config.engine)
    at = cr.placement
    if cold_read_blocker(tuple(readers.values()), config.g3, args=at.engine_args) is not None:
        return []
    return [_launch(a, p, 0, at.env, at.engine_args, model=cr.model) for a, p in readers.items()]


def _capacity_launches(config: GateConfig, name: str) -> list[Launch]:
    """The capacity arms (kvgate.orchestration.g3.capacity): the levels' engine, then one per instance."""
    dep = config.inventory.inventory.engines[name]
    if not dep.capacity_figure:
        return []
    env, args = _placement(config, name)
    whole = len(dep.instance_envs) > 1 and config.g3.whole_machine is not None
    out = []
    for arm, profile in _capacity(config, name).items():
        out += [_launch(arm, profile, 0, env, args)]
        out += [
            _launch(f"{arm}#{i}", profile, 2 * i, e, dep.engine_args)
            for i, e in enumerate(dep.instance_envs)
            if whole
        ]
    return out


def _capacity(config: GateConfig, name: str) -> dict[str, EngineProfile]:
    """The capacity arms' profiles G3 runs (none where the gate profile measures no capacity)."""
    tier = config.engine(config.inventory.inventory.engines[name].tier_profile)
    return capacity_profiles(tier, profiles=config.engine) if config.g3.capacity else {}


def _volume_launches(config: GateConfig, name: str) -> list[Launch]:
    """R2/R3's arms (kvgate.orchestration.g3.volumes): the SSD tier with the seed's engine settings."""
    dep, vc = config.inventory.inventory.engines[name], config.g3.volumes
    profile = ssd_tier_profile(_capacity(config, name), config.engine(dep.tier_profile))
    if vc is None or dep.baseline_volume is None or profile is None:
        return []
    settings = vc.engine.get(profile.kind)
    env, args = (settings.env, settings.args) if settings else ({}, ())
    cap_env, cap_args = _placement(config, name)
    out = [_launch(VOLUME_ARMS[1], profile, 0, {**cap_env, **env}, (*cap_args, *args))]
    if len(dep.instance_envs) > 1 and vc.whole_machine and profile.serves_concurrently:
        both = (*dep.engine_args, *args)
        out += [
            _launch(f"{VOLUME_ARMS[1]}#{i}", profile, 2 * i, {**e, **env}, both)
            for i, e in enumerate(dep.instance_envs)
        ]
    return out


def _launch(
    arm: str,
    profile: EngineProfile,
    slot: int,
    env: dict[str, str],
    args: tuple[str, ...],
    *,
    model: str | None = None,
) -> Launch:
    return Launch(arm, profile, slot, tuple(sorted(env.items())), tuple(args), model)


def start_each(
    ex: Executor, config: GateConfig, *, host: str, name: str, store: RunStore, notify: Any
) -> dict[str, str]:
    """Each of the deployment's launches but the probe's, started once on ``host``: arm → what happened."""
    setup, result = deployment_setup(ex, config, host=host, name=name, store=store)
    ctx = DeploymentContext(ex, setup, config.g3, StoreSink(store, result, notify))
    try:
        scratch.create(ex, setup.work, fresh=True)
        found = {}
        for launch in launches(config, name)[1:]:
            notify(f"engine {name}: start {launch.arm} ({launch.profile.name})")
            found[launch.arm] = start_once(ctx, launch)
        return found
    finally:
        remove_work_dir(ex, setup.work)


def start_once(ctx: DeploymentContext, launch: Launch) -> str:
    """Start ``launch`` as G3 does, until it answers, then stop it: "ready in N s", or why it did not."""
    where = ctx.placement(f"start-{launch.arm.replace('#', '-')}", launch.slot)
    where = replace(where, model=launch.model or where.model)
    eng = EngineService(ctx.ex, launch.profile, where, env=dict(launch.env), args=launch.args)
    return started(eng, lambda record: ctx.sink.engine(f"start[{launch.arm}]", record))


def started(eng: EngineService, ready: Callable[[EngineLaunch], None] = lambda _: None) -> str:
    """Start ``eng`` until it answers (``ready`` gets its record), then stop it: "ready in N s", or
    "did not start: why". A lost link or an interrupt is raised, as is an engine that would not stop."""
    try:
        with eng:
            assert eng.record is not None
            ready(eng.record)
    except (TransportError, Interrupted):
        raise  # the link or the run ended, not the engine
    except LabError as exc:
        if eng.record is None:
            return f"did not start: {exc}"
        raise  # it started, but stopping it failed (processes left): a lab error
    assert eng.record is not None
    return f"ready in {eng.record.ready_s:.1f} s"


def start_model_load(ex: Executor, config: GateConfig, *, host: str, name: str, store: RunStore) -> str:
    """R9's model load ``name`` (``model_loads:``) started once from its copy on a candidate volume, until it
    answers, then stopped; every other copy only looked for (G3 starts it cold from each, for minutes).

    "ready in N s", or why it cannot start as G3 will start it.
    """
    ml, inv = config.inventory.inventory.model_loads[name], config.inventory.inventory
    missing = [f"{v}: {p}" for v, p in ml.copies.items() if not ex.run("test -e %s", p, timeout_s=60).ok]
    if missing:
        return f"copies not found on {host}: {'; '.join(missing)}"
    candidates = [v for v in ml.copies if inv.volumes[v].kind == "candidate"]
    volume = (candidates or list(ml.copies))[0]
    vol = inv.volumes[volume]
    run = scratch.run_directory(vol, gate="preflight", host=host, run=store.path.name)
    work = scratch.checked(ex, vol, f"{run}/model-load-{name}")  # before anything is created
    python = ml.python or "python3"
    where = Placement(
        f"{work.path}/run", ml.copies[volume], f"{work.path}/cache", port=ml.port, python=python
    )
    eng = EngineService(ex, config.engine(ml.profile), where, env=ml.env, args=ml.engine_args)
    try:
        scratch.create(ex, work, fresh=True)
        return f"{started(eng)} (from its copy on {volume})"
    finally:
        remove_work_dir(ex, work)
