"""The G4 plan: per engine deployment and engine host, what the soak must hold.

The limits are the site's own (``workloads/g4/<scale>.yaml`` limits); the seed gives
G4 no reference figures, only "72 h stable". A check the deployment cannot measure
(no external tier for the capacity check, no hit counter for the hit trend) is SKIP
with that reason; a soak too short to show a trend is INVALID.

>>> from kvgate.configuration.gateconfig import in_memory
>>> from kvgate.configuration.inventory import Inventory
>>> inv = Inventory.model_validate({"site": "s", "scale": "smoke",
...     "hosts": {"h": {"roles": ["engine"]}},
...     "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}},
...     "engines": {"tiny": {"tier_profile": "llama-cpp-disk", "recompute_profile": "llama-cpp-recompute",
...                          "volume": "v"}}})
>>> [c.check for c in plan(in_memory(inv))][:3]
['soak[tiny].coverage', 'soak[tiny].failed-requests', 'soak[tiny].empty-responses']
"""

from __future__ import annotations

from kvgate.base.criteria import Criterion
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import CLUSTER
from kvgate.judgement import Check, Ruling

G4Check = Check[None]  # subject: the deployment; key: which soak measurement judges it


def g4_check(
    host: str, deployment: str, check: str, key: str, criterion: Criterion, *, ruled: Ruling | None
) -> G4Check:
    """One soak criterion for one deployment on one host; the soak's detail is said when not PASS."""
    return Check(
        host=host, check=check, criterion=criterion, spec=None, key=key, subject=deployment, ruled=ruled
    )


def criteria(profile: G4Profile) -> list[tuple[str, Criterion]]:
    """(key, criterion) of every soak check, in report order."""
    src = f"workloads/g4/{profile.name}.yaml limits"
    lim = profile.limits
    first_last = (
        f"median of the last {lim.baseline_windows} windows / the first {lim.baseline_windows} after warm-up"
    )
    return [
        (
            "coverage",
            Criterion(
                "G4-RUN-1",
                "soak_coverage_ratio",
                ">=",
                lim.min_coverage,
                "x",
                source=f"{src}.min_coverage (windows' span / {profile.duration_s} s)",
            ),
        ),
        (
            "failed-requests",
            Criterion(
                "G4-ERR-1",
                "failed_requests",
                "<=",
                lim.max_failed_requests,
                "requests",
                source=f"{src}.max_failed_requests",
            ),
        ),
        (
            "empty-responses",
            Criterion(
                "G4-ERR-2",
                "empty_responses",
                "<=",
                lim.max_empty_responses,
                "responses",
                source=f"{src}.max_empty_responses (HTTP 200, no token)",
            ),
        ),
        (
            "engines-up",
            Criterion(
                "G4-ERR-3", "engines_died", "==", 0, "engines", source="every engine alive after every window"
            ),
        ),
        (
            "canary",
            Criterion(
                "G4-KV-1",
                "canary_mismatches",
                "==",
                0,
                "requests",
                source="canary outputs of every window equal the first window's, or "
                "first differ at a near-tie (vLLM check_logprobs_close)",
            ),
        ),
        (
            "ttft-drift",
            Criterion(
                "G4-DRIFT-1",
                "ttft_p50_ratio",
                "<=",
                lim.max_ttft_p50_ratio,
                "x",
                source=f"{src}.max_ttft_p50_ratio ({first_last})",
            ),
        ),
        (
            "throughput-retention",
            Criterion(
                "G4-DRIFT-2",
                "throughput_retention",
                ">=",
                lim.min_throughput_retention,
                "x",
                source=f"{src}.min_throughput_retention ({first_last})",
            ),
        ),
        (
            "memory-growth",
            Criterion(
                "G4-MEM-1",
                "engine_rss_growth_mib",
                "<=",
                lim.max_rss_growth_mib,
                "MiB",
                source=f"{src}.max_rss_growth_mib (engines' RSS, last − first)",
            ),
        ),
        (
            "cache-capacity",
            Criterion(
                "G4-CAP-1",
                "cache_peak_ratio",
                "<=",
                1.0,
                "x",
                source="the tiers' largest size / their capacity (engine profile)",
            ),
        ),
        (
            "hit-retention",
            Criterion(
                "G4-HIT-1",
                "hit_ratio_retention",
                ">=",
                lim.min_hit_retention,
                "x",
                source=f"{src}.min_hit_retention (engines' hit counter, {first_last})",
            ),
        ),
    ]


def skip_reason(key: str, tier: EngineProfile) -> str | None:
    """Why this deployment cannot measure ``key`` (declared by its profile), or None."""
    if key == "cache-capacity" and tier.cache is None:
        return f"{tier.name} has no external KV tier (cache: null): there is no tier size to hold to a cap"
    if key == "cache-capacity" and tier.cache is not None and tier.cache.capacity_bytes is None:
        return f"{tier.name} declares no tier capacity (cache.capacity_bytes)"
    if key == "empty-responses" and tier.fixed_output is None:
        return (
            f"{tier.name} cannot be asked to generate exactly max_tokens (fixed_output: null): "
            "an answer without a token may be the model's own end of sequence"
        )
    if key == "hit-retention" and (tier.metrics is None or not tier.hit_counter):
        return f"{tier.name} exposes no hit counter on /metrics (hit_counter): hits cannot be trended"
    return None


def plan(config: GateConfig) -> list[G4Check]:
    """G4 checks for every engine deployment on every one of its hosts."""
    inventory = config.inventory.inventory
    if not inventory.engines:
        crit = Criterion("G4-ENG-1", "engine_hosts", ">", 0, source="inventory: engines")
        why = "the inventory declares no engine deployment (engines:): G4 has nothing to soak"
        return [g4_check(CLUSTER, "", "engines", "engines", crit, ruled=Ruling.invalid(why))]
    profile = config.g4
    checks = []
    for name, dep in inventory.engines.items():
        tier = config.engine(dep.tier_profile)
        if not inventory.engine_hosts(name):
            crit = Criterion("G4-ENG-1", "engine_hosts", ">", 0, source=f"inventory: engines.{name}.hosts")
            why = f"engines.{name} runs on no host (none listed, none with the engine role)"
            checks.append(
                g4_check(CLUSTER, name, f"engines[{name}].hosts", "hosts", crit, ruled=Ruling.invalid(why))
            )
        for host in inventory.engine_hosts(name):
            for key, crit in criteria(profile):
                skip = skip_reason(key, tier)
                ruled = Ruling.skip(skip) if skip else None
                checks.append(g4_check(host, name, f"soak[{name}].{key}", key, crit, ruled=ruled))
    return checks
