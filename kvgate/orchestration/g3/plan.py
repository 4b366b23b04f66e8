"""The G3 plan: per engine deployment and engine host, the evidence checks and the reference verdicts.

Evidence checks (the site's own rules): the tier wrote the prompt state through
(G3-KV-1), the restore was served cold from the SSD (G3-KV-2, INVALID when not),
restored greedy outputs equal recompute (G3-KV-3), and under load the engine's hit
counter shows the cache served the prompts (G3-KV-4). Reference verdicts come from
the gate profile's bindings; one this engine cannot measure (a concurrency it does
not serve, arms it does not have) is SKIP with the profile's declared reason on a
one-request-at-a-time engine, else INVALID — never PASS.

>>> from kvgate.configuration.gateconfig import in_memory
>>> from kvgate.configuration.inventory import Inventory
>>> inv = Inventory.model_validate({"site": "s", "scale": "smoke",
...     "hosts": {"h": {"roles": ["engine", "storage-client"]}},
...     "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}},
...     "engines": {"tiny": {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute",
...                          "volume": "v"}}})
>>> [c.check for c in plan(in_memory(inv))][:2]
['engine[tiny].ssd-restore.write-through', 'engine[tiny].ssd-restore.cold-proof']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvgate.base.criteria import Criterion, Verdict
from kvgate.configuration.engine_profile import EngineProfile, tensor_parallel
from kvgate.configuration.gate_profiles import (
    ARMS,
    CAPACITY_ARMS,
    READ_ARMS,
    G3Profile,
    Unmeasurable,
    VerdictBinding,
)
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import CLUSTER, EngineDeployment
from kvgate.configuration.references import References
from kvgate.judgement import Bound, Check, Ruling

NEAR_TIE_RULE = (
    "greedy outputs of cached requests equal recompute's, or first differ at a near-tie "
    "(each token in the other's top-k logprobs: vLLM check_logprobs_close)"
)

# an engine profile by name: GateConfig.engine in a gate run (the shipped loader in tests of shipped files)
Profiles = Callable[[str], EngineProfile]


G3Check = Check[VerdictBinding | None]  # spec: the gate profile's binding (None: a site rule)


def g3_check(
    host: str, name: str, check: str, key: str, criterion: Criterion, *, ruled: Ruling | None = None
) -> G3Check:
    """A site-rule check of one deployment: the measurement ``key`` judged against ``criterion``."""
    return Check(host=host, check=check, criterion=criterion, spec=None, key=key, subject=name, ruled=ruled)


def _ruling(found: tuple[Verdict, str] | None) -> Ruling | None:
    return None if found is None else Ruling(*found)


def evidence_checks(host: str, name: str, profile: G3Profile, tier: EngineProfile) -> list[G3Check]:
    """The site's own rules on the cache-served arms: write-through, cold proof, correctness, hits."""
    src = f"workloads/g3/{profile.name}.yaml"
    grew, read = profile.write_through.min_ratio, profile.cold.min_read_ratio
    crits = [
        (
            "write-through",
            Criterion(
                "G3-KV-1",
                "cache_growth_ratio",
                ">=",
                grew,
                "x",
                source=f"{src} write_through.min_ratio × prompt tokens × state B/token",
            ),
        ),
        (
            "cold-proof",
            Criterion(
                "G3-KV-2",
                "restore_read_ratio",
                ">=",
                read,
                "x",
                source=f"{src} cold.min_read_ratio (device and engine bytes / predicted)",
            ),
        ),
        ("correctness", Criterion("G3-KV-3", "output_mismatches", "==", 0, "requests", source=NEAR_TIE_RULE)),
    ]
    if measures_levels(tier, profile):
        crits.append(
            (
                "cache-hits",
                Criterion(
                    "G3-KV-4",
                    "cache_hit_ratio",
                    ">=",
                    profile.cold.min_hit_ratio,
                    "x",
                    source=f"{src} cold.min_hit_ratio: the engine's hit counter / prompt tokens under load",
                ),
            )
        )
    no_tier = None
    if tier.cache is None:
        verdict = Verdict.SKIP if profile.when_no_tier is Unmeasurable.SKIP else Verdict.INVALID
        no_tier = (verdict, f"{tier.name} has no external KV tier: {profile.no_tier_reason or 'no SSD arm'}")
    arm = "ssd-restore" if tier.cache is not None else "warm"
    return [
        g3_check(
            host,
            name,
            f"engine[{name}].{arm}.{key}",
            key,
            c,
            ruled=_ruling(no_tier) if key in ("write-through", "cold-proof") else None,
        )
        for key, c in crits
    ]


def measures_levels(tier: EngineProfile, profile: G3Profile) -> bool:
    """Whether G3 runs the concurrency levels on this engine (it batches, the profile asks for levels)."""
    return tier.serves_concurrently and bool(profile.concurrency)


@dataclass(frozen=True)
class Shape:
    """What the plan needs of a deployment: its engine instances, R1's readers and their arguments,
    the SSD tier the volume arms run and the baseline volume they run it on (R2/R3)."""

    instances: int = 1
    readers: tuple[EngineProfile, ...] = ()
    read_args: tuple[str, ...] = ()  # the readers' engine arguments (cold_read.placement)
    ssd_tier: EngineProfile | None = None  # the capacity arms' ssd-tier, or the tier profile
    baseline_volume: str | None = None

    @classmethod
    def of(cls, dep: EngineDeployment, *, profiles: Profiles) -> Shape:
        args = dep.cold_read.placement.engine_args if dep.cold_read else ()
        readers = tuple(read_profiles(dep, profiles=profiles).values())
        tier = profiles(dep.tier_profile)
        ssd = capacity_profiles(tier, profiles=profiles).get(CAPACITY_ARMS[1], tier)
        return cls(len(dep.instance_envs), readers, args, ssd, dep.baseline_volume)


def unmeasurable(
    binding: VerdictBinding, tier: EngineProfile, profile: G3Profile, shape: Shape = Shape()
) -> tuple[Verdict, str] | None:
    """Whether this deployment can measure a binding; if not, the verdict and the reason shown."""
    if binding.cold_read:
        return _cold_read_unmeasurable(binding, profile, shape)
    if binding.volumes:
        return _volumes_unmeasurable(binding, tier, profile, shape)
    if binding.capacity:
        return _capacity_unmeasurable(binding, tier, profile, shape.instances)
    return _arms_unmeasurable(binding, tier, profile)


def capacity_profiles(tier: EngineProfile, *, profiles: Profiles) -> dict[str, EngineProfile]:
    """The capacity arms' profiles a tier profile declares: dram-only, and ssd-tier where it has a tier."""
    return {arm: profiles(name) for arm, name in capacity_names(tier).items()}


def capacity_names(tier: EngineProfile) -> dict[str, str]:
    """The engine profile names of the capacity arms a tier profile declares, by arm."""
    arms = tier.capacity_arms
    if arms is None:
        return {}
    out = {CAPACITY_ARMS[0]: arms.dram_only}
    if tier.cache is not None:
        out[CAPACITY_ARMS[1]] = arms.ssd_tier or tier.name
    return out


def _capacity_unmeasurable(
    binding: VerdictBinding, tier: EngineProfile, profile: G3Profile, instances: int
) -> tuple[Verdict, str] | None:
    declared = binding.when_unmeasurable
    if profile.capacity is None:
        return (
            Verdict.INVALID,
            f"the gate profile {profile.name} does not measure the capacity arms (capacity:)",
        )
    if tier.capacity_arms is None:
        verdict = Verdict.SKIP if declared is Unmeasurable.SKIP else Verdict.INVALID
        return (
            verdict,
            f"{tier.name} declares no capacity arms (capacity_arms: how it runs without its SSD tier)",
        )
    if tier.cache is None:
        verdict = Verdict.SKIP if profile.when_no_tier is Unmeasurable.SKIP else Verdict.INVALID
        return verdict, f"{tier.name} has no external KV tier: no ssd-tier arm (its dram-only arm ran alone)"
    if binding.concurrency == "whole-machine" and (
        why := _whole_machine_unmeasurable(binding, profile, instances)
    ):
        return why
    if binding.statistic == "output_throughput_tok_per_s" and not tier.serves_concurrently:
        verdict = Verdict.SKIP if declared is Unmeasurable.SKIP else Verdict.INVALID
        where = (
            "on the whole machine"
            if binding.concurrency == "whole-machine"
            else f"at concurrency {binding.concurrency}"
        )
        return verdict, (
            f"{tier.name} serves one request at a time: the seed's throughput gain {where} is of engines "
            "batching the sessions in flight; queued one by one, each arm's throughput is its whole turn, "
            "work outside the tier included (llama-cpp-python writes each turn's state to its disk cache "
            "before it answers the next: here the same gain measured −29 % to +1270 % run to run)"
        )
    return None


def _volumes_unmeasurable(
    binding: VerdictBinding, tier: EngineProfile, profile: G3Profile, shape: Shape
) -> tuple[Verdict, str] | None:
    """Whether the SSD tier can run on the baseline volume and on the candidate as the binding asks."""
    declared = Verdict.SKIP if binding.when_unmeasurable is Unmeasurable.SKIP else Verdict.INVALID
    if profile.volumes is None:
        return Verdict.INVALID, f"the gate profile {profile.name} does not measure the volume arms (volumes:)"
    if shape.ssd_tier is None or shape.ssd_tier.cache is None:
        verdict = Verdict.SKIP if profile.when_no_tier is Unmeasurable.SKIP else Verdict.INVALID
        return verdict, f"{tier.name} has no external KV tier to put on the baseline and candidate volume"
    if shape.baseline_volume is None:
        why = "the deployment names no baseline volume for its KV tier (engines.<name>.baseline_volume)"
        return declared, f"{why}: {binding.reason}" if binding.reason else why
    if binding.whole_volumes and shape.instances < 2:
        return declared, "the deployment runs one engine instance per host (engines.<name>.instances)"
    if (binding.whole_volumes or binding.statistic == "output_throughput_tok_per_s") and not (
        shape.ssd_tier.serves_concurrently
    ):
        return declared, (
            f"{shape.ssd_tier.name} serves one request at a time: the seed's waves of N sessions were "
            "batched by the engine; queued one by one, a wave's throughput is each turn's whole work"
        )
    return None


def _arms_unmeasurable(
    binding: VerdictBinding, tier: EngineProfile, profile: G3Profile
) -> tuple[Verdict, str] | None:
    arms = (binding.baseline_arm, binding.candidate_arm)
    if tier.cache is None and any(a not in ("recompute", "warm") for a in arms):
        verdict = Verdict.SKIP if profile.when_no_tier is Unmeasurable.SKIP else Verdict.INVALID
        return verdict, f"{tier.name} has no external KV tier: {profile.no_tier_reason or 'no SSD arm'}"
    arms_ok = all(a in ARMS for a in arms) and binding.concurrency != "whole-machine"
    if arms_ok and binding.concurrency == "engine":
        return None
    if arms_ok and measures_levels(tier, profile) and binding.concurrency in profile.concurrency:
        return None
    if tier.serves_concurrently:
        what = f"arms {binding.baseline_arm}/{binding.candidate_arm} at concurrency {binding.concurrency}"
        return Verdict.INVALID, f"the gate profile {profile.name} does not measure {what}"
    verdict = Verdict.SKIP if binding.when_unmeasurable is Unmeasurable.SKIP else Verdict.INVALID
    return verdict, f"{tier.name}: {binding.reason or 'not measurable on this engine'}"


def _cold_read_unmeasurable(
    binding: VerdictBinding, profile: G3Profile, shape: Shape
) -> tuple[Verdict, str] | None:
    if not shape.readers:
        verdict = Verdict.SKIP if binding.when_unmeasurable is Unmeasurable.SKIP else Verdict.INVALID
        return (
            verdict,
            binding.reason or "the deployment names no serial and parallel tier reader (cold_read)",
        )
    why = cold_read_blocker(shape.readers, profile, args=shape.read_args)
    return None if why is None else (Verdict.INVALID, why)


def cold_read_blocker(
    readers: tuple[EngineProfile, ...], profile: G3Profile, *, args: tuple[str, ...] = ()
) -> str | None:
    """Why named readers cannot be compared under this gate profile (None: the phase runs).

    ``args``: the readers' engine arguments; more than one tensor-parallel rank is that many
    readers, so the serial one would not be serial (R1 ran on one card).
    """
    if profile.cold_read is None:
        return f"the gate profile {profile.name} does not measure the cold-read arms (cold_read:)"
    if (tp := tensor_parallel(args)) > 1:
        return (
            f"the readers run at tensor parallelism {tp} (cold_read.placement.engine_args): {tp} ranks "
            "read at once, so the serial reader is not serial; R1 ran on one card (TP 1)"
        )
    no_tier = [r.name for r in readers if r.cache is None]
    if no_tier:
        return f"cold_read profile(s) without an external KV tier: {', '.join(no_tier)}"
    one = [r.name for r in readers if not r.serves_concurrently]
    if one and profile.cold_read.concurrency > 1:
        return (
            f"{', '.join(one)} serve(s) one request at a time: the readers cannot be compared with "
            f"{profile.cold_read.concurrency} prompts in flight"
        )
    return None


def read_profiles(dep: EngineDeployment, *, profiles: Profiles) -> dict[str, EngineProfile]:
    """R1's two readers, serial-read and parallel-read, when the deployment names them."""
    if dep.cold_read is None:
        return {}
    names = (dep.cold_read.serial, dep.cold_read.parallel)
    return {arm: profiles(n) for arm, n in zip(READ_ARMS, names, strict=True)}


def _whole_machine_unmeasurable(
    binding: VerdictBinding, profile: G3Profile, instances: int
) -> tuple[Verdict, str] | None:
    if instances > 1 and profile.whole_machine is not None:
        return None
    if instances > 1:
        what = f"arms {binding.baseline_arm}/{binding.candidate_arm} on the whole machine"
        return Verdict.INVALID, f"the gate profile {profile.name} does not measure {what} (whole_machine:)"
    verdict = Verdict.SKIP if binding.when_unmeasurable is Unmeasurable.SKIP else Verdict.INVALID
    why = binding.reason or "the deployment runs one engine instance per host (engines.<name>.instances)"
    return verdict, why


def reference_checks(
    host: str,
    name: str,
    tier: EngineProfile,
    profile: G3Profile,
    refs: References,
    *,
    shape: Shape = Shape(),
) -> list[G3Check]:
    """One check per verdict binding of the gate profile."""
    out: list[G3Check] = []
    for b in profile.verdicts:
        far = _far_above(b, profile)
        comparable = not b.volumes or profile.volumes is None or profile.volumes.comparable
        bound = Bound(
            refs.get(b.reference), b.threshold_fraction, b.tolerance, tuple(b.levels), far, comparable
        )
        why = unmeasurable(b, tier, profile, shape)
        note = "" if why else _note(b, tier, profile, shape)
        out.append(
            Check(
                host=host,
                check=f"engine[{name}].{b.check}",
                criterion=bound.criterion(),
                spec=b,
                key=b.check,
                subject=name,
                bound=bound,
                ruled=_ruling(why),
                note=note,
            )
        )
    return out


def _far_above(b: VerdictBinding, profile: G3Profile) -> Ruling | None:
    """What a volume binding's gain far above the seed's range becomes: the arms were not the seed's."""
    vc = profile.volumes
    if not b.volumes or vc is None:
        return None
    verdict = Verdict.SKIP if vc.when_not_comparable is Unmeasurable.SKIP else Verdict.INVALID
    why = vc.not_comparable_reason or (
        "the seed's gain is its array against local NVMe under its workload; one this far above it says "
        "this site's baseline volume, engine or load is not the seed's"
    )
    return Ruling(verdict, why)


def _note(b: VerdictBinding, tier: EngineProfile, profile: G3Profile, shape: Shape) -> str:
    """How a measurable binding was measured on this engine, said beside its verdict."""
    if b.cold_read:
        return _cold_read_note(profile, shape.readers)
    if b.volumes:
        return _volumes_note(b, profile, shape)
    if b.capacity:
        return _capacity_note(b, tier, profile, shape.instances)
    return (
        ""
        if tier.serves_concurrently
        else f"measured at concurrency 1: {tier.name} serves one request at a time"
    )


def _capacity_note(b: VerdictBinding, tier: EngineProfile, profile: G3Profile, instances: int) -> str:
    cap, arms = profile.capacity, capacity_names(tier)
    assert cap is not None
    where = (
        f"{instances} engine instances driven together"
        if b.concurrency == "whole-machine"
        else "sessions at " + "/".join(f"c{c}" for c in b.levels)
    )
    names = " vs ".join(arms.values())
    note = f"{names}: {cap.documents} shared documents, {cap.reuse * 100:g}% of each turn reused, {where}"
    if not tier.serves_concurrently:
        note += f"; {tier.name} serves one request at a time, so the turns in flight queue alike in both arms"
    return note


def _volumes_note(b: VerdictBinding, profile: G3Profile, shape: Shape) -> str:
    vc, ssd = profile.volumes, shape.ssd_tier
    assert vc is not None
    assert ssd is not None
    where = f"{shape.instances} engine instances together" if b.whole_volumes else "one engine"
    levels = "/".join(f"c{c}" for c in b.levels)
    note = (
        f"{ssd.name}'s tier on baseline volume {shape.baseline_volume} vs the candidate, {where}: "
        f"{vc.sessions} sessions of {vc.prompt_tokens} tokens populated, then per level ({levels}) one "
        f"wave of N sessions each read once, page cache dropped, {vc.max_tokens} output tokens"
    )
    if not ssd.serves_concurrently:
        note += f"; {ssd.name} serves one request at a time, so a wave queues alike on both volumes"
    return note


def _cold_read_note(profile: G3Profile, readers: tuple[EngineProfile, ...]) -> str:
    """(A reader that serves one request at a time is measurable only at concurrency 1: nothing queues.)"""
    assert profile.cold_read is not None
    serial, parallel = (r.name for r in readers)
    return f"{profile.cold_read.concurrency} prompts in flight, restored cold by {serial} vs {parallel}"


def plan(config: GateConfig) -> list[G3Check]:
    """G3 checks for every engine deployment on every one of its hosts."""
    inventory = config.inventory.inventory
    if not inventory.engines:
        why = "the inventory declares no engine deployment (engines:): G3 has nothing to run"
        return [_cluster_invalid("engines", why)]
    profile, refs = config.g3, config.references
    checks = []
    for name, dep in inventory.engines.items():
        tier = config.engine(dep.tier_profile)  # every name was checked when the configuration loaded
        hosts = inventory.engine_hosts(name)
        if not hosts:
            why = f"engines.{name} runs on no host (none listed, none with the engine role)"
            checks.append(_cluster_invalid(f"engines[{name}].hosts", why))
        for host in hosts:
            checks += evidence_checks(host, name, profile, tier)
            checks += reference_checks(
                host, name, tier, profile, refs, shape=Shape.of(dep, profiles=config.engine)
            )
    return checks


def _cluster_invalid(check: str, reason: str) -> G3Check:
    """A cluster-wide check that makes the gate INVALID when there is nothing to run."""
    crit = Criterion("G3-ENG-1", "engine_hosts", ">", 0, source="inventory: engines")
    return g3_check(CLUSTER, "", check, check, crit, ruled=Ruling.invalid(reason))
