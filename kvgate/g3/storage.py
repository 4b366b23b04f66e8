"""Model loading (R9) and checkpoint (R1) in G3: the agent's workloads on the candidate vs a baseline.

Per engine host and candidate volume of its deployments, the agent's model-load
and checkpoint workloads run cold on the candidate and on the host's first scratch
baseline volume, and the engine itself starts cold from a model copy on each
(:mod:`kvgate.g3.engine_load`: weight-load time from its log). The improvement is
computed the way the reference states it (R9: load-time speedup; R1: save-time
speedup and write-bandwidth gain). Without a baseline volume, or when both volumes
sit on the same block device (a ratio of a disk with itself), the verdict follows
the gate profile's declared policy — SKIP or INVALID, never PASS — with the
measured numbers shown.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kvgate import agentctl
from kvgate.g2.workloads import TO_MEASUREMENTS, model_profile
from kvgate.g3.engine_load import engine_load
from kvgate.g3.measure import remove_work_dir, work_root
from kvgate.g3.profile import G3Profile, StorageBinding, Unmeasurable, load_g3_profile
from kvgate.hostevidence import HostEvidence
from kvgate.inventory.schema import Inventory, VolumeKind
from kvgate.judge import Criterion, Judgement, Measurement, Verdict, skipped
from kvgate.references import criterion_for, improvement_measurement, judge_reference, load_references
from kvgate.scratch import ScratchDir, checked, create
from kvgate.store import RunStore
from kvgate.transport.base import Executor
from kvgate.workload_profiles import agent_spec

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

    def statistic(self, volume: str, name: str) -> Measurement | None:
        """One statistic on one volume: the fastest trusted loader's time, or a checkpoint number."""
        ms = self.measured.get(volume, {})
        if name == "model_load_s":
            loads = [m for k, m in ms.items() if k.startswith("model_load.") and k.endswith(".elapsed_s")]
            trusted = [m for m in loads if not m.invalid_reason and isinstance(m.value, (int, float))]
            if trusted:
                return min(trusted, key=lambda m: float(m.value or 0))
            return loads[0] if loads else ms.get("model_load.status")
        if name == "engine_weights_load_s":
            return ms.get("engine.weights_load_s") or ms.get("engine.status")
        key = {"checkpoint_write_s": "checkpoint.write_s"}.get(name, "checkpoint.write_bw_bytes_per_s")
        return ms.get(key) or ms.get("checkpoint.status")

    def improvement(self, b: StorageBinding) -> Measurement:
        """The candidate's improvement over the baseline for one binding, with every doubt attached."""
        ref = load_references().get(b.reference)
        base, cand = self.statistic(self.baseline, b.statistic), self.statistic(self.candidate, b.statistic)
        reasons = [f"{v}: {m.invalid_reason}" for v, m in ((self.baseline, base), (self.candidate, cand))
                   if m is not None and m.invalid_reason]  # fmt: skip
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


@dataclass(frozen=True)
class StorageCheck:
    """One R9/R1 verdict for one host's candidate volume against its baseline."""

    host: str
    candidate: str
    baseline: str | None
    check: str
    binding: StorageBinding
    criterion: Criterion
    policy: Unmeasurable
    reason: str

    def evaluate(self, result: StorageResult | None) -> Judgement:
        """Judge against the reference; not evaluable (no baseline, same device) → the declared policy."""
        if result is None or self.baseline is None:
            return self._not_evaluable(
                None, f"host {self.host} has no scratch baseline volume; {self.reason}"
            )
        m = result.improvement(self.binding)
        ref = load_references().get(self.binding.reference)
        b = self.binding
        j = judge_reference(ref, m, threshold_fraction=b.threshold_fraction, tolerance=b.tolerance)
        if result.same_device:
            return self._not_evaluable(
                m, f"{j.condition} — not evaluable: {result.same_device}; {self.reason}"
            )
        return replace(j, condition=f"{j.condition} — {self.candidate} vs baseline {self.baseline}")

    def _not_evaluable(self, m: Measurement | None, text: str) -> Judgement:
        if self.policy is Unmeasurable.SKIP:
            return replace(skipped(self.criterion, text), measurement=m, condition=text)
        return Judgement(Verdict.INVALID, text, self.criterion, m)


def storage_pairs(inv: Inventory) -> list[tuple[str, str, str | None]]:
    """(host, candidate volume, baseline volume or None) for every engine host's deployment volumes."""
    pairs: dict[tuple[str, str], str | None] = {}
    for name, dep in inv.engines.items():
        for host in inv.engine_hosts(name):
            vols = inv.volumes_of(host)
            base = sorted(v for v, vol in vols.items() if vol.kind is VolumeKind.BASELINE and vol.scratch)
            pairs[(host, dep.volume)] = base[0] if base else None
    return [(h, c, b) for (h, c), b in pairs.items()]


def storage_plan(inventory: Inventory) -> list[StorageCheck]:
    """The R9/R1 checks of the gate profile, per engine host and candidate volume."""
    sp = load_g3_profile(inventory.scale).storage
    if sp is None:
        return []
    refs = load_references()
    return [
        StorageCheck(host, cand, base, f"storage[{cand}].{b.check}", b,
                     criterion_for(refs.get(b.reference), threshold_fraction=b.threshold_fraction,
                                   tolerance=b.tolerance), sp.when_unmeasurable, sp.reason)
        for host, cand, base in storage_pairs(inventory)
        for b in sp.verdicts
    ]  # fmt: skip


def measure_storage(
    ex: Executor, inv: Inventory, check: StorageCheck, *, profile: G3Profile, store: RunStore, notify: Notify
) -> StorageResult:
    """Run model-load and checkpoint cold on the candidate and the baseline volume of one host."""
    assert check.baseline is not None, "a check without a baseline is not measured"
    result = StorageResult(check.host, check.candidate, check.baseline)
    run = AgentRun(ex, profile, store, notify, sudo=inv.hosts[check.host].sudo)
    for volume in (check.candidate, check.baseline):
        vol = inv.volumes[volume]
        work = checked(
            ex, vol, f"{work_root(vol.path, check.host, store)}/storage"
        )  # before anything is made
        try:
            create(ex, work, fresh=True)
            carriers = HostEvidence(ex).resolve(work.path).carriers
            result.devices[volume] = "+".join(carriers) if carriers else None
            result.measured[volume] = run.workloads(volume, work)
            notify(f"g3 storage {volume}: engine cold start")
            result.measured[volume] |= engine_load(
                ex,
                inv,
                host=check.host,
                candidate=check.candidate,
                volume=volume,
                work=work.path,
                store=store,
            )
        finally:
            remove_work_dir(ex, work)
    return result


@dataclass(frozen=True)
class AgentRun:
    """The agent's model-load and checkpoint workloads on one host, results kept as artifacts."""

    ex: Executor
    profile: G3Profile
    store: RunStore
    notify: Notify
    sudo: bool

    def workloads(self, volume: str, work: ScratchDir) -> dict[str, Measurement]:
        """Both workloads in one checked volume directory; a failed workload leaves its reason as a status."""
        sp = self.profile.storage
        assert sp is not None, "storage_plan plans nothing without a storage section"
        found: dict[str, Measurement] = {}
        for workload, model in (("model-load", sp.model_load), ("checkpoint", sp.checkpoint)):
            self.notify(f"g3 storage {volume}: agent {workload}")
            spec = agent_spec(model_profile(model), workload, target_dir=work.path)
            job = agentctl.start(self.ex, workload, spec, target=work, sudo=self.sudo)
            res = agentctl.wait(self.ex, job, None, timeout_s=WORKLOAD_TIMEOUT_S)
            ev = self.store.artifact(
                self.ex.host, f"g3/storage/{volume}/{workload}.json", json.dumps(res, indent=1)
            )
            if res.get("status") != "ok":
                reason = f"agent {workload} failed: {res.get('error') or res.get('status')}"
                found[f"{workload.replace('-', '_')}.status"] = Measurement("status", None, "", (ev,), reason)
                continue
            found |= {m.metric: m for m in TO_MEASUREMENTS[workload](res, ev, None)}
        return found
