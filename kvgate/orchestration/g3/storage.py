"""Model loading (R9) and checkpoint (R1) in G3: the candidate volume against a baseline volume.

R9 is service load: the engine started cold until its endpoint answers (:mod:`orchestration.g3.engine_load`),
from a model copy on each volume — a deployment's own model, or R9's models under ``model_loads:``
(DeepSeek-32B and 70B on Ascend in the seed). Its weight load, from the engine's log, is shown
beside it: weights only. R1's checkpoint is the agent's multi-rank save (at full scale each of
8 ranks writes a whole 65.6 GB snapshot: the reading under which the seed's figures add up, said
in the verdict). The agent's own model-load workload is measured and shown, not judged: it reads
the weights and nothing else. Per host and candidate volume, each runs cold on the candidate and
on the host's first scratch baseline volume (or the model load's baseline copy); the improvement is
computed the way the reference states it. The engine starts run without order bias
(:mod:`kvgate.orchestration.g3.starts`: one untimed warm-up, then timed starts alternating the volumes,
their median judged and their spread shown). Without a baseline volume, or when both volumes sit on
the same block device (a ratio of a disk with itself), the verdict follows the gate profile's
declared policy — SKIP or INVALID, never PASS — with the measured numbers shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from kvgate.base.criteria import Inputs, Judgement, Measurement, Verdict, fmt
from kvgate.configuration.gate_profiles import StorageBinding, StorageProfile, Unmeasurable
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import CLUSTER, Inventory, VolumeKind
from kvgate.configuration.model_profiles import ModelProfile, agent_spec
from kvgate.configuration.reference_schema import Reference
from kvgate.configuration.references import improvement_measurement
from kvgate.judgement import Bound, Check, Ruling
from kvgate.orchestration.g3.engine_load import ColdSite, engine_load, service_load
from kvgate.orchestration.g3.measure import remove_work_dir
from kvgate.orchestration.g3.starts import run_starts
from kvgate.probes import agentctl
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.nfs_server import ServerCache
from kvgate.probes.scratch import ScratchDir, checked, create, run_directory
from kvgate.probes.workload_results import TO_MEASUREMENTS
from kvgate.record import RunStore
from kvgate.transport import Executor

WORKLOAD_TIMEOUT_S = 6 * 3600
Notify = Callable[[str], None]


@dataclass
class StorageResult:
    """The agent's measurements on both volumes of one host, and their backing devices."""

    host: str
    candidate: str
    baseline: str
    measured: dict[str, dict[str, Measurement]] = field(default_factory=dict)  # volume → metric → m
    devices: dict[str, str | None] = field(default_factory=dict)  # the devices carrying each volume

    @property
    def same_device(self) -> str | None:
        """Why the ratio compares a device with itself, or None."""
        a, b = self.devices.get(self.candidate), self.devices.get(self.baseline)
        return f"candidate and baseline share block device {a}" if a is not None and a == b else None

    def statistic(self, volume: str, name: str, model_load: str | None = None) -> Measurement | None:
        """One statistic on one volume: the fastest trusted loader's time, an engine's, or a checkpoint's.

        ``model_load``: the engine numbers of that model load (``model_loads:``), else the deployment's.
        """
        ms = self.measured.get(volume, {})
        if name == "model_load_s":
            metric = self.model_load_metric(volume)
            return None if metric is None else ms[metric]
        engine = f"service[{model_load}]" if model_load else "engine"
        if name in ENGINE_STATISTICS:
            return ms.get(f"{engine}.{ENGINE_STATISTICS[name]}") or ms.get(f"{engine}.status")
        key = {"checkpoint_write_s": "checkpoint.write_s"}.get(name, "checkpoint.write_bw_bytes_per_s")
        return ms.get(key) or ms.get("checkpoint.status")

    def model_load_metric(self, volume: str) -> str | None:
        """Which measurement is the volume's model-load time: the fastest trusted loader's (none
        trusted: the first loader's, or the status saying why none ran)."""
        ms = self.measured.get(volume, {})
        loads = [k for k in ms if k.startswith("model_load.") and k.endswith(".elapsed_s")]
        trusted = [k for k in loads if not ms[k].invalid_reason and isinstance(ms[k].value, (int, float))]
        if trusted:
            return min(trusted, key=lambda k: float(ms[k].value or 0))
        return loads[0] if loads else "model_load.status" if "model_load.status" in ms else None

    def improvement(self, b: StorageBinding, ref: Reference) -> Measurement:
        """The candidate's improvement over the baseline for one binding, with every doubt attached."""
        base = self.statistic(self.baseline, b.statistic, b.model_load)
        cand = self.statistic(self.candidate, b.statistic, b.model_load)
        reasons = [
            f"{v}: {m.invalid_reason}"
            for v, m in ((self.baseline, base), (self.candidate, cand))
            if m is not None and m.invalid_reason
        ]
        if base is None or cand is None or not base.value or not cand.value:
            why = "; ".join(reasons) or "a workload produced no number"
            return Measurement(ref.improvement_metric, None, "", (), why)
        m = improvement_measurement(
            ref,
            baseline=float(base.value),
            candidate=float(cand.value),
            evidence=base.evidence + cand.evidence,
        )
        return replace(m, invalid_reason="; ".join(reasons) or None)


ENGINE_STATISTICS = {"engine_ready_s": "ready_s", "engine_weights_load_s": "weights_load_s"}


@dataclass(frozen=True)
class StoragePair:
    """What an R9/R1 check compares on one host: its candidate volume against its baseline volume."""

    candidate: str
    baseline: str | None
    binding: StorageBinding
    reason: str  # the gate profile's word on why a comparison may not be evaluable
    reading: str = ""  # how the seed's row is read (R1's checkpoint), said in the verdict


StorageCheck = Check[StoragePair]


def evaluate_storage(check: StorageCheck, result: StorageResult | None) -> Judgement:
    """Judge the check on its host's measured volumes (no baseline: ruled when it was planned)."""
    if check.ruled is not None or result is None:
        return check.evaluate()
    return check.evaluate(storage_inputs(check, result))


def storage_inputs(check: StorageCheck, result: StorageResult) -> Inputs:
    """The improvement judged, what is shown beside it, and whether a shared device blocks it."""
    pair, bound = check.spec, check.bound
    assert bound is not None, "every storage check is bound to its reference"
    m = result.improvement(pair.binding, bound.reference)
    said = tuple(x for x in (_beside(pair, result), pair.reading) if x)
    blocked = f"{result.same_device}; {pair.reason}" if result.same_device else ""
    return Inputs({check.key: m}, said=said, blocked=blocked)


def _beside(pair: StoragePair, result: StorageResult) -> str:
    """Service load: every timed start with its spread, and the weight load within it (not judged)."""
    if pair.binding.statistic != "engine_ready_s" or pair.baseline is None:
        return ""
    engine = f"service[{pair.binding.model_load}]" if pair.binding.model_load else "engine"
    starts, weights = [], []
    for volume in (pair.candidate, pair.baseline):
        ms = result.measured.get(volume, {})
        each, spread = ms.get(f"{engine}.ready_s_starts"), ms.get(f"{engine}.ready_s_spread")
        if each is not None:
            pct = f"{float(spread.value) * 100:.0f}%" if spread and isinstance(spread.value, float) else "—"
            starts.append(f"{volume} {each.value} (spread {pct})")
        m = result.statistic(volume, "engine_weights_load_s", pair.binding.model_load)
        value = m.value if m is not None and isinstance(m.value, int | float) else None
        weights.append(f"{volume} {'—' if value is None else fmt(float(value))} s")
    timed = (
        f"median of timed starts after an untimed warm-up, volumes alternating: {'; '.join(starts)}; "
        if starts
        else ""
    )
    return f"{timed}weights only (not judged): {', '.join(weights)}"


def storage_pairs(inv: Inventory) -> list[tuple[str, str, str | None]]:
    """(host, candidate volume, baseline volume or None) for every engine host's deployment volumes.

    The baseline is the host's first scratch baseline volume that no deployment names as its KV
    tier's baseline (``baseline_volume``: R2/R3's local NVMe, not R9's NFS).
    """
    pairs: dict[tuple[str, str], str | None] = {}
    kv_baselines = {d.baseline_volume for d in inv.engines.values()}
    for name, dep in inv.engines.items():
        for host in inv.engine_hosts(name):
            vols = inv.volumes_of(host)
            base = sorted(
                v
                for v, vol in vols.items()
                if vol.kind is VolumeKind.BASELINE and vol.scratch and v not in kv_baselines
            )
            pairs[(host, dep.volume)] = base[0] if base else None
    return [(h, c, b) for (h, c), b in pairs.items()]


def storage_plan(config: GateConfig) -> list[StorageCheck]:
    """The R9/R1 checks of the gate profile: per engine host and candidate volume, or per model load."""
    inventory, sp = config.inventory.inventory, config.g3.storage
    if sp is None:
        return []
    checks = []
    for b in sp.verdicts:
        ref = config.references.get(b.reference)
        if b.model_load is not None:
            checks += _model_load_checks(inventory, b, sp, ref=ref)
            continue
        reading = checkpoint_reading(config.models[sp.checkpoint]) if b.statistic in CHECKPOINT else ""
        checks += [
            _check(host, cand, base, b, sp, ref=ref, reading=reading)
            for host, cand, base in storage_pairs(inventory)
        ]
    return checks


def _check(
    host: str,
    cand: str,
    base: str | None,
    b: StorageBinding,
    sp: StorageProfile,
    *,
    ref: Reference,
    missing: str = "",
    reading: str = "",
) -> StorageCheck:
    bound = Bound(ref, b.threshold_fraction, b.tolerance)
    policy = Verdict.SKIP if sp.when_unmeasurable is Unmeasurable.SKIP else Verdict.INVALID
    second = "no second baseline volume kvgate may write to, besides its KV tier's"
    none = f"host {host} declares {second}: {sp.reason}"
    why = missing or ("" if base else none)
    return Check(
        host=host,
        check=f"storage[{cand or b.model_load}].{b.check}",
        criterion=bound.criterion(),
        spec=StoragePair(cand, base, b, sp.reason, reading),
        key=bound.criterion().metric,
        subject=cand,
        bound=bound,
        ruled=Ruling(policy, why) if why else None,
        note=f"{cand} vs baseline {base}" if base else "",
        when_blocked=policy,
    )


def _model_load_checks(
    inv: Inventory, b: StorageBinding, sp: StorageProfile, *, ref: Reference
) -> list[StorageCheck]:
    """A binding's check on every host of its model load; a model load the inventory lacks: not evaluable."""
    assert b.model_load is not None
    if b.model_load not in inv.model_loads:
        why = (
            f"the inventory declares no model load {b.model_load!r} (model_loads: its copies, profile, hosts)"
        )
        return [_check(CLUSTER, "", None, b, sp, ref=ref, missing=why)]
    cand, base = inv.model_load_volumes(b.model_load)
    return [_check(h, cand, base, b, sp, ref=ref) for h in inv.model_loads[b.model_load].hosts]


CHECKPOINT = ("checkpoint_write_s", "checkpoint_write_bw_bytes_per_s")
AGENT_STATISTICS = ("model_load_s", *CHECKPOINT)


def checkpoint_reading(model: ModelProfile) -> str:
    """How R1's checkpoint row is read, and what stands in for its unstated baseline (said in the verdict)."""
    ck = model.checkpoint
    assert ck is not None, f"workloads/models/{model.name}.yaml has no checkpoint section"
    per_rank = ck.snapshot_bytes if ck.snapshot_per_rank else ck.snapshot_bytes // ck.ranks
    each = "a whole snapshot" if ck.snapshot_per_rank else "its share of one snapshot"
    return (
        f"each save: {ck.ranks} ranks × {fmt(per_rank / 1e9)} GB ({each} per rank) = "
        f"{fmt(per_rank * ck.ranks / 1e9)} GB; the seed's '8 卡 … 每份 65.6GB 整模型快照' is read as one "
        "65.6 GB snapshot per card (524.8 GB per save: 2.95 GB/s over 178 s against its stated 3.26, the "
        "reading nearest its figures, cross-checks X3/X4; one snapshot per save would be 0.37 GB/s); the "
        "seed names no baseline storage for this row, so the site's baseline volume stands in"
    )


def measure_storage(
    ex: Executor,
    config: GateConfig,
    checks: list[StorageCheck],
    *,
    store: RunStore,
    notify: Notify,
    servers: Mapping[str, ServerCache],
) -> StorageResult:
    """What ``checks`` (one host, one candidate) need, cold on the candidate and the baseline volume.

    ``servers``: per volume, control of its NFS server's cache (used where the volume is NFS).
    """
    inv, first = config.inventory.inventory, checks[0].spec
    assert first.baseline is not None, "a check without a baseline is not measured"
    host = checks[0].host
    result = StorageResult(host, first.candidate, first.baseline)
    needs = _Needs.of(checks)
    run = AgentRun(ex, config, store, notify, sudo=inv.hosts[host].sudo)
    sites: dict[str, tuple[ScratchDir, ServerCache | None]] = {}
    try:
        for volume in (first.candidate, first.baseline):
            vol = inv.volumes[volume]
            run_dir = run_directory(vol, gate="g3", host=host, run=store.path.name)
            work = checked(ex, vol, f"{run_dir}/storage")  # before anything is made
            sites[volume] = (work, None)
            create(ex, work, fresh=True)
            resolved = HostEvidence(ex).resolve(work.path)
            result.devices[volume] = "+".join(resolved.carriers) if resolved.carriers else None
            server = servers.get(volume) if resolved.kind == "nfs" else None
            sites[volume] = (work, server)
            result.measured[volume] = run.workloads(volume, work, server) if needs.agent else {}
        if needs.engine or needs.model_loads:
            starts = run_starts(
                (first.candidate, first.baseline),
                config.g3.storage.engine_starts if config.g3.storage else 2,
                lambda volume, label: run.engines(needs, checks[0], volume, sites[volume], label),
            )
            for volume, found in starts.items():
                result.measured[volume] |= found
    finally:
        for work, _ in sites.values():
            remove_work_dir(ex, work)
    return result


@dataclass(frozen=True)
class _Needs:
    """What a group of checks needs measured: the agent's workloads, the deployment's engine, model loads."""

    agent: bool
    engine: bool
    model_loads: tuple[str, ...]

    @classmethod
    def of(cls, checks: list[StorageCheck]) -> _Needs:
        bindings = [c.spec.binding for c in checks]
        engine = any(b.statistic in ENGINE_STATISTICS and b.model_load is None for b in bindings)
        loads = tuple(sorted({b.model_load for b in bindings if b.model_load}))
        return cls(any(b.statistic in AGENT_STATISTICS for b in bindings), engine, loads)


@dataclass(frozen=True)
class AgentRun:
    """The agent's model-load and checkpoint workloads, and the engines' cold starts, on one host."""

    ex: Executor
    config: GateConfig
    store: RunStore
    notify: Notify
    sudo: bool

    def engines(
        self,
        needs: _Needs,
        check: StorageCheck,
        volume: str,
        where: tuple[ScratchDir, ServerCache | None],
        label: str,
    ) -> dict[str, Measurement]:
        """One start (``label``) of each engine ``check``'s group needs, cold from its copy on ``volume``."""
        found: dict[str, Measurement] = {}
        sudo = self.config.inventory.inventory.hosts[check.host].sudo
        work, server = where
        site = ColdSite(self.ex, check.host, sudo, volume, work.path, self.store, server, label)
        if needs.engine:
            self.notify(f"g3 storage {volume}: engine cold start ({label})")
            found |= engine_load(site, self.config, candidate=check.spec.candidate)
        for name in needs.model_loads:
            self.notify(f"g3 storage {volume}: {name} service load ({label})")
            found |= service_load(site, self.config, name=name)
        return found

    def workloads(self, volume: str, work: ScratchDir, server: ServerCache | None) -> dict[str, Measurement]:
        """Both workloads in one checked volume directory; a failed workload leaves its reason as a status."""
        sp = self.config.g3.storage
        assert sp is not None, "storage_plan plans nothing without a storage section"
        found: dict[str, Measurement] = {}
        for workload, model in (("model-load", sp.model_load), ("checkpoint", sp.checkpoint)):
            self.notify(f"g3 storage {volume}: agent {workload}")
            spec = agent_spec(self.config.models[model], workload, target_dir=work.path)
            job = agentctl.start(self.ex, workload, spec, target=work, sudo=self.sudo)
            res = agentctl.wait(
                self.ex,
                job,
                None,
                timeout_s=WORKLOAD_TIMEOUT_S,
                server_drop=server.answer if server else None,
            )
            ev = self.store.artifact(
                self.ex.host, f"g3/storage/{volume}/{workload}.json", json.dumps(res, indent=1)
            )
            if res.get("status") != "ok":
                reason = f"agent {workload} failed: {res.get('error') or res.get('status')}"
                found[f"{workload.replace('-', '_')}.status"] = Measurement("status", None, "", (ev,), reason)
                continue
            found |= {m.metric: m for m in TO_MEASUREMENTS[workload](res, ev, server)}
        return found
