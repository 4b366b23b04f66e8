"""Measure one engine deployment on one host: stage the model, run the arms, keep every number.

Artifacts land in the run directory as they are produced (``g3/<deployment>/...``);
the engines' versions, command lines and configuration go into run.json under
``engines``. The deployment's work directory on the candidate volume is removed
afterwards, whatever happened.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from kvgate.base.criteria import Inputs, Measurement
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import (
    READ_ARMS,
    ColdBounds,
)
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import EngineDeployment
from kvgate.orchestration.g3.arms import Trial, summarize
from kvgate.orchestration.g3.cold_read import measured_arms
from kvgate.orchestration.g3.context import Phase, Setup
from kvgate.orchestration.g3.evidence import shared_device_reason
from kvgate.orchestration.g3.load_arms import WHOLE_MACHINE, LoadTrial, level_key, summarize_level
from kvgate.orchestration.g3.load_arms import summaries as load_summaries
from kvgate.orchestration.g3.plan import capacity_profiles, read_profiles
from kvgate.orchestration.g3.prediction import VOLUME_RESTORE_ARMS, StorageBound
from kvgate.orchestration.g3.protocol import ArmsResult, ColdRestore, TierProbe
from kvgate.orchestration.g3.serving import level_latency
from kvgate.orchestration.g3.verdicts import (
    cache_hits_measurement,
    cold_proof_measurement,
    correctness_measurement,
    reference_measurements,
    write_through_measurement,
)
from kvgate.probes.engines import check_engine_installed, describe_model, engine_python, stage_model
from kvgate.probes.scratch import ScratchDir, checked, remove, run_directory
from kvgate.record import ArmFigures, Contradiction, EngineLaunch, Figure, RunStore, held_little
from kvgate.transport import Executor


@dataclass
class DeploymentResult:
    """What G3 measured for one deployment on one host."""

    host: str
    deployment: str
    tier: EngineProfile
    arms: dict[str, ArmFigures] = field(default_factory=dict)
    measurements: dict[str, Measurement] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    load_mismatches: list[str] = field(default_factory=list)
    near_ties: list[str] = field(default_factory=list)  # tolerated: differ only from a near-tie on
    compared: tuple[int, int] = (0, 0)  # outputs compared: (restored and warm vs recompute, under load)
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    device: str | None = None
    loadgen_address: str | None = None  # where the controller reached the engines; None: loadgen on the host
    capacity_figure: bool = True  # False: the inventory turned kvgate's capacity figure off
    predictions: list[dict[str, Any]] = field(
        default_factory=list
    )  # the planner beside the arms (prediction)
    serving: dict[str, Any] = field(default_factory=dict)  # per load: client and engine latency (serving)
    g2_figures: dict[str, Any] = field(default_factory=dict)  # G2's figures of the tier's volume (prediction)
    model: str = ""  # what the deployment serves (describe_model)

    def inputs(self, key: str) -> Inputs:
        """What the check ``key`` is judged on: the measurements; for correctness, the first mismatch
        (said when it fails) and the near-ties it tolerated (said always: '0 requests' hid one)."""
        if key != "correctness":
            return Inputs(self.measurements)
        detail = f"first mismatch: {self.mismatches[0]}" if self.mismatches else ""
        restored, loads = self.compared
        said: tuple[str, ...] = (
            f"of {restored + loads} outputs compared: {restored} restored or warm against recompute's, "
            f"{loads} under load against their reference arm's",
        )
        if ties := self.near_ties:
            said += (f"{len(ties)} output(s) differed only at a near-tied token, tolerated: {ties[0]}",)
        return Inputs(self.measurements, detail=detail, said=said)


class StoreSink:
    """The protocol's sink: artifacts into the run store, progress to the live view, engine records."""

    def __init__(self, store: RunStore, result: DeploymentResult, notify: Any) -> None:
        self.store, self.result, self._notify = store, result, notify

    def save(self, name: str, text: str) -> str:
        return self.store.artifact(self.result.host, f"g3/{self.result.deployment}/{name}", text)

    def notify(self, event: str) -> None:
        self._notify(f"g3 {self.result.deployment}: {event}")

    def engine(self, arm: str, record: EngineLaunch) -> None:
        self.result.engines[arm] = record.model_dump()
        key = f"{self.result.host}/{self.result.deployment}"
        self.store.merge_meta(engines={key: self.result.engines})


def remove_work_dir(ex: Executor, directory: ScratchDir) -> None:
    """Our own directory (also after Ctrl-C); its parents go when no other deployment or run uses them."""
    remove(ex, directory, parents=2)


def measure_deployment(
    ex: Executor, config: GateConfig, *, host: str, name: str, store: RunStore, notify: Any
) -> DeploymentResult:
    """Run every arm of one deployment on one host and judge-ready measurements from them."""
    setup, result = deployment_setup(ex, config, host=host, name=name, store=store)
    sink = StoreSink(store, result, notify)
    bound = StorageBound.load(
        store, config, host=host, name=name
    )  # G2's figures (kvgate.orchestration.g3.prediction)
    try:
        arms = ColdRestore(ex, setup, config.g3, sink).run()
    finally:
        remove_work_dir(ex, setup.work)
        if setup.baseline is not None:
            remove_work_dir(ex, setup.baseline[1])
    _conclude(result, qualify(bound.hold(arms), config.g3.cold), config, sink)
    add_predictions(result, arms, bound)
    store.merge_meta(contradictions={f"{host}/{name}": [c.model_dump() for c in contradictions(result)]})
    loads = level_latency(arms.load_trials, arms.whole_trials) | level_latency(arms.capacity_trials)
    result.serving = loads | level_latency(arms.read_trials) | level_latency(arms.volume_trials)
    return result


def probe_deployment(
    ex: Executor, config: GateConfig, *, host: str, name: str, store: RunStore, notify: Any
) -> tuple[DeploymentResult, TierProbe]:
    """The tier probe alone (``kvgate preflight``): one prompt through one deployment's tier cycle."""
    setup, result = deployment_setup(ex, config, host=host, name=name, store=store)
    sink = StoreSink(store, result, notify)
    try:
        probe = ColdRestore(ex, setup, config.g3, sink).run(probe_only=True).probe
    finally:
        remove_work_dir(ex, setup.work)
    assert probe is not None
    sink.save("tier-probe.json", json.dumps(probe.to_dict(), indent=1, default=str))
    return result, probe


def deployment_setup(
    ex: Executor, config: GateConfig, *, host: str, name: str, store: RunStore
) -> tuple[Setup, DeploymentResult]:
    """One deployment on one host resolved (engine installed, model staged), and its empty result."""
    inv = config.inventory.inventory
    dep, h = inv.engines[name], inv.hosts[host]
    tier = config.engine(dep.tier_profile)
    result = DeploymentResult(
        host,
        name,
        tier,
        loadgen_address=inv.loadgen_address(name, host),
        capacity_figure=dep.capacity_figure,
        model=describe_model(dep, tier),
    )
    python = engine_python(h, dep)
    check_engine_installed(ex, python, tier)
    model, bpt = stage_model(ex, h, dep, tier, python)
    vol = inv.volumes[dep.volume]
    run = run_directory(vol, gate="g3", host=host, run=store.path.name)
    work = checked(ex, vol, f"{run}/{name}")  # before anything is created
    baseline = None
    if dep.baseline_volume is not None and config.g3.volumes is not None:
        base = inv.volumes[dep.baseline_volume]
        where = run_directory(base, gate="g3", host=host, run=store.path.name)
        baseline = (dep.baseline_volume, checked(ex, base, f"{where}/{name}"))
    at = dep.capacity
    setup = Setup(
        deployment=name,
        tier=tier,
        recompute=config.engine(dep.recompute_profile),
        python=python,
        model=model,
        work=work,
        port=dep.port,
        state_bytes_per_token=bpt,
        sudo=h.sudo,
        salt=f"{store.path.name}/{host}/{name}/{secrets.token_hex(3)}",
        envs=dep.instance_envs,
        readers=read_profiles(dep, profiles=config.engine),
        read=read_phase(dep),
        engine_args=dep.engine_args,
        capacity=capacity_profiles(tier, profiles=config.engine),
        capacity_env=at.env if at else dep.instance_envs[0],
        capacity_args=at.engine_args if at else dep.engine_args,
        capacity_figure=dep.capacity_figure,
        loadgen_address=result.loadgen_address,
        baseline=baseline,
        candidate=dep.volume,
        port_span=dep.port_span,
    )
    return setup, result


def qualify(arms: ArmsResult, bounds: ColdBounds) -> ArmsResult:
    """Every arm whose device read far more than its engine says so (``shared_device``): a restore
    against its engine's bytes, an arm that reads no tier against ``max_idle_device_bytes``."""
    arms.trials = {a: [_shared_trial(t, bounds) for t in ts] for a, ts in arms.trials.items()}
    for loads in (
        arms.load_trials,
        arms.capacity_trials,
        arms.whole_trials,
        arms.read_trials,
        arms.volume_trials,
    ):
        for arm in list(loads):
            loads[arm] = [_shared_load(t, bounds) for t in loads[arm]]
    return arms


def _shared_trial(t: Trial, bounds: ColdBounds) -> Trial:
    w = t.window
    if w is None:
        return t
    why = shared_device_reason(
        bounds, device_bytes=w.device_read_bytes, engine_bytes=w.engine_read_bytes, host_load=w.host_load
    )
    return replace(t, shared_device=why)


def _shared_load(t: LoadTrial, bounds: ColdBounds) -> LoadTrial:
    why = shared_device_reason(
        bounds, device_bytes=t.device_read_bytes, engine_bytes=t.engine_read_bytes, host_load=t.host_load
    )
    return replace(t, shared_device=why)


def contradictions(result: DeploymentResult) -> list[Contradiction]:
    """Each restore whose device read far more than its engine: the two byte counts (medians) and why.
    An arm that restores nothing from a volume (DRAM, recompute) is qualified in its evidence, but its
    bytes contradict no restore bandwidth. And an SSD tier faster than the DRAM tier beside it."""
    where = f"{result.host}/{result.deployment}"
    shared = [
        _shared(where, arm, s, result.device or "its counters")
        for arm, s in result.arms.items()
        if arm.split("@")[0] in VOLUME_RESTORE_ARMS
        and s.qualifications
        and s.engine_read_bytes_p50
        and s.device_read_bytes_p50 is not None
    ]
    inverted = _ssd_beats_dram(where, result.arms)
    return shared + ([inverted] if inverted else [])


def _ssd_beats_dram(where: str, arms: dict[str, ArmFigures]) -> Contradiction | None:
    """A DRAM tier that holds what the SSD tier holds restores it at least as fast: the ssd-tier arm's
    TTFT p50 beating dram-only's by more than a tenth at every level where the DRAM cache reused about
    as much is a contradiction. Where it reused little, the SSD tier's gain is the capacity the arms
    compare, said on page 1 (a reader took the demo's 100 MB DRAM cache for DRAM against SSD)."""
    little = held_little(arms)
    pairs = [
        (level, dram, ssd, dram.ttft_p50_s, ssd.ttft_p50_s)
        for arm, dram in arms.items()
        if arm.startswith("dram-only@")
        and arm not in little
        and (ssd := arms.get(f"ssd-tier@{(level := arm.partition('@')[2])}")) is not None
        and dram.ttft_p50_s
        and ssd.ttft_p50_s
    ]
    if not pairs or any(s_ttft >= 0.9 * d_ttft for *_, d_ttft, s_ttft in pairs):
        return None
    level, dram, ssd, d_ttft, s_ttft = max(pairs, key=lambda p: p[3] / p[4])
    hits = (dram.hit_tokens_p50, ssd.hit_tokens_p50)
    reused = "not counted" if None in hits else f"{hits[0]:,.0f} against {hits[1]:,.0f}"
    return Contradiction(
        where=where,
        first=Figure(name=f"ssd-tier@{level}: TTFT p50", value=s_ttft, unit="s", source=f"ssd-tier@{level}"),
        second=Figure(
            name=f"dram-only@{level}: TTFT p50", value=d_ttft, unit="s", source=f"dram-only@{level}"
        ),
        meaning=(
            f"The SSD tier beat the DRAM tier at every level where both reused the load ({len(pairs)}), here "
            f"by {d_ttft / s_ttft:.3g}×, though a DRAM tier holding what the SSD tier held restores at least "
            f"as fast. Prompt tokens reused per round (median, DRAM against SSD): {reused}: something other "
            "than the tiers' media slowed the dram-only arm"
        ),
    )


def _shared(where: str, arm: str, s: ArmFigures, device: str) -> Contradiction:
    engine, dev = s.engine_read_bytes_p50 or 0.0, s.device_read_bytes_p50 or 0.0
    first_why = s.qualifications[0].split(": ", 2)[2].removeprefix("it ")  # "read 10.6 GB while the …"
    median = f"median of {s.trials} loads"
    return Contradiction(
        where=where,
        first=Figure(
            name=f"{arm}: the engine's reads ({median})", value=engine, unit="B", source=f"{arm} engine bytes"
        ),
        second=Figure(
            name=f"{arm}: the device's reads ({device}, {median})",
            value=dev,
            unit="B",
            source=f"{arm} device",
        ),
        meaning=(
            f"In {len(s.qualifications)} of {s.trials} loads another reader shared the device (the first: "
            f"the device {first_why}). The engine's bytes hold: the restore bandwidth is its bytes over "
            "its time"
        ),
    )


def read_phase(dep: EngineDeployment) -> Phase:
    """Where R1's readers run: the deployment's cold_read placement and model (one card, TP 1)."""
    cr = dep.cold_read
    if cr is None:
        return Phase()
    where = cr.placement
    return Phase(where.env, where.engine_args, cr.model, cr.state_bytes_per_token)


def add_predictions(result: DeploymentResult, arms: ArmsResult, bound: StorageBound) -> None:
    """The cold proof carries the too-fast restores; the planner's predictions go beside the arms."""
    if (cold := result.measurements.get("cold-proof")) is not None:
        result.measurements["cold-proof"] = bound.held_cold(cold, arms)
    # a deployment with no tier on the storage restores nothing from it: nothing to predict
    result.predictions = bound.compare(result.arms) if result.tier.cache is not None else []
    result.g2_figures = bound.recorded()


def _conclude(result: DeploymentResult, arms: ArmsResult, config: GateConfig, sink: StoreSink) -> None:
    """Summaries, measurements and their artifacts."""
    profile = config.g3
    result.device, result.mismatches = arms.device, arms.mismatches
    result.load_mismatches, result.near_ties = arms.load_mismatches, arms.near_ties
    result.compared = arms.compared
    result.arms = {a: summarize(a, ts, output_tokens=profile.max_tokens) for a, ts in arms.trials.items()}
    result.arms |= load_summaries(arms.load_trials)
    result.arms |= load_summaries(arms.capacity_trials)
    result.arms |= {
        level_key(a, WHOLE_MACHINE): summarize_level(a, ts, level_key(a, WHOLE_MACHINE))
        for a, ts in arms.whole_trials.items()
    }
    result.arms |= load_summaries(measured_arms(arms.read_trials))
    result.arms |= load_summaries(arms.volume_trials)
    doc = {
        "tokens_per_word": arms.tokens_per_word,
        "loadgen": {
            "side": "host" if result.loadgen_address is None else "controller",
            "address": result.loadgen_address or "127.0.0.1",
        },
        "device": arms.device,
        "arms": {a: s.model_dump() for a, s in result.arms.items()},
        "trials": {a: [t.to_dict() for t in ts] for a, ts in arms.trials.items()},
        "load_trials": {a: [t.to_dict() for t in ts] for a, ts in arms.load_trials.items()},
        "capacity_trials": {a: [t.to_dict() for t in ts] for a, ts in arms.capacity_trials.items()},
        "whole_machine_trials": {a: [t.to_dict() for t in ts] for a, ts in arms.whole_trials.items()},
        "cold_read_trials": {a: [t.to_dict() for t in ts] for a, ts in arms.read_trials.items()},
        "volume_trials": {a: [t.to_dict() for t in ts] for a, ts in arms.volume_trials.items()},
        "mismatches": arms.mismatches,
        "load_mismatches": arms.load_mismatches,
        "near_ties": arms.near_ties,
        "cold_read_unmeasurable": arms.read_unmeasurable,
    }
    doc["tier_probe"] = arms.probe.to_dict() if arms.probe else None  # metrics, tokenizer, restore, reason
    ev = (sink.save("arms.json", json.dumps(doc, indent=1, default=str)),)
    if arms.unmeasurable:  # the probe stopped the deployment: every check says why, none runs for hours
        keys = [
            "write-through",
            "cold-proof",
            "correctness",
            "cache-hits",
            *(b.check for b in profile.verdicts),
        ]
        result.measurements = {k: Measurement(k, None, "", ev, arms.unmeasurable) for k in keys}
        return
    restores = arms.trials.get("ssd-restore", [])
    refs = config.references
    result.measurements = {
        "write-through": write_through_measurement(restores, profile.write_through),
        "cold-proof": cold_proof_measurement(restores, profile.cold),
        "correctness": correctness_measurement(arms.mismatches, sum(arms.compared), ev),
        "cache-hits": cache_hits_measurement(arms.load_trials),
    }
    for b in profile.verdicts:
        found = reference_measurements(refs.get(b.reference), b, result.arms, max_cv=profile.max_cv)
        for key, m in found.items():
            why = arms.read_unmeasurable if (b.baseline_arm, b.candidate_arm) == READ_ARMS else None
            value = None if why else m.value
            result.measurements[key] = Measurement(m.metric, value, m.unit, ev, why or m.invalid_reason)
    data = {k: asdict(m) for k, m in result.measurements.items()}
    sink.save("measurements.json", json.dumps(data, indent=1, default=str))
