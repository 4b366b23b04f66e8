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

from kvgate.base.criteria import Criterion, Verdict
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import CLUSTER
from kvgate.judgement import Check, Ruling
from kvgate.orchestration.g4.health import KEYS, limits

G4Check = Check[None]  # subject: the deployment; key: which soak measurement judges it


def g4_check(
    host: str, deployment: str, check: str, key: str, criterion: Criterion, *, ruled: Ruling | None
) -> G4Check:
    """One soak criterion for one deployment on one host; the soak's detail is said when not PASS.

    A health check the host has nothing for (no NVMe drive, no such NIC counter) is SKIP, said why.
    """
    blocked = Verdict.SKIP if key in KEYS else Verdict.INVALID
    return Check(
        host=host,
        check=check,
        criterion=criterion,
        spec=None,
        key=key,
        subject=deployment,
        ruled=ruled,
        when_blocked=blocked,
    )


def criteria(profile: G4Profile) -> list[tuple[str, Criterion]]:
    """(key, criterion) of every soak check, in report order."""
    return [*soak_criteria(profile), *health_criteria(profile)]


def soak_criteria(profile: G4Profile) -> list[tuple[str, Criterion]]:
    """(key, criterion) of the soak's own checks: coverage, errors, canary, integrity, drift, capacity."""
    src = f"workloads/g4/{profile.name}.yaml limits"
    lim = profile.limits
    first_last = (
        f"median of the last {lim.baseline_windows} windows / the first {lim.baseline_windows} after warm-up"
    )
    slope = "Theil-Sen slope over every window after warm-up, a plateau judged by its tail, 95 % interval"
    return [
        (
            "coverage",
            Criterion(
                "G4-RUN-1",
                "soak_coverage_ratio",
                ">=",
                lim.min_coverage,
                "x",
                source=f"{src}.min_coverage (the windows' span, warm-up included, / {profile.duration_s} s)",
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
            "integrity",
            Criterion(
                "G4-INT-1",
                "integrity_mismatches",
                "==",
                0,
                "places",
                source="every block fio wrote (crc32c), every checkpoint and KV-chunk cell "
                f"({profile.integrity.checksum}) read back equal to what was written",
            ),
        ),
        (
            "integrity-reads",
            Criterion(
                "G4-INT-2",
                "integrity_io_errors",
                "==",
                0,
                "places",
                source="the integrity load's reads and writes: no I/O error (none retried)",
            ),
        ),
        (
            "ttft-drift",
            Criterion(
                "G4-DRIFT-1",
                "ttft_p99_growth_per_h",
                "<=",
                lim.max_ttft_p99_growth_per_h,
                "x/h",
                source=f"{src}.max_ttft_p99_growth_per_h ({slope} of TTFT p99 / the first windows')",
            ),
        ),
        (
            "throughput-retention",
            Criterion(
                "G4-DRIFT-2",
                "throughput_loss_per_h",
                "<=",
                lim.max_throughput_loss_per_h,
                "x/h",
                source=f"{src}.max_throughput_loss_per_h ({slope} of output tok/s / the first windows')",
            ),
        ),
        (
            "memory-growth",
            Criterion(
                "G4-MEM-1",
                "engine_rss_growth_mib_per_h",
                "<=",
                lim.max_rss_growth_mib_per_h,
                "MiB/h",
                source=f"{src}.max_rss_growth_mib_per_h ({slope} of the engines' RSS)",
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
            "tier-growth",
            Criterion(
                "G4-CAP-2",
                "tier_cap_share_at_72h",
                "<=",
                1.0,
                "x",
                source=f"the tiers' size / capacity projected to 72 h by its {slope}",
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
                source=f"{src}.min_hit_retention (the engines' hit counter or logged restores, {first_last})",
            ),
        ),
    ]


HEALTH_SOURCES = {
    "nvme-media-errors": (
        "G4-NVME-1",
        "<=",
        "max_media_errors",
        "nvme smart-log media and data-integrity errors, added",
    ),
    "nvme-critical-warning": ("G4-NVME-2", "<=", None, "nvme smart-log critical warning, at any snapshot"),
    "nvme-temperature": ("G4-NVME-3", "<=", "max_temperature_c", "nvme smart-log temperature, the hottest"),
    "nvme-wear": ("G4-NVME-4", "<=", "max_percentage_used_increase", "nvme smart-log percentage used, added"),
    "nvme-error-log": ("G4-NVME-5", "<=", "max_error_log_entries", "nvme smart-log error-log entries, added"),
    "nic-pause": ("G4-NIC-1", "<=", "max_pause_frames", "pause frames (ethtool -S), added"),
    "nic-cnp": ("G4-NIC-2", "<=", "max_cnp", "CNPs (ethtool -S, RDMA hw_counters), added"),
    "nic-discard": ("G4-NIC-3", "<=", "max_discards", "discards (ethtool -S, RDMA counters), added"),
    "nic-out-of-buffer": (
        "G4-NIC-4",
        "<=",
        "max_out_of_buffer",
        "out-of-buffer drops (RDMA hw_counters), added",
    ),
    "paths": ("G4-PATH-1", "<=", "max_path_changes", "NVMe-oF path and ANA state changes between snapshots"),
    "kernel-log": (
        "G4-KLOG-1",
        "<=",
        "max_kernel_log_lines",
        "kernel log lines about NVMe, NVMe-oF, RDMA, multipath, I/O errors, hung tasks, OOM in the soak",
    ),
}


def health_criteria(profile: G4Profile) -> list[tuple[str, Criterion]]:
    """(key, criterion) of every health and kernel check: deltas from the first snapshot to the last."""
    src = f"workloads/g4/{profile.name}.yaml health"
    lim = limits(profile)
    out = []
    for key, (rule, op, field, what) in HEALTH_SOURCES.items():
        metric, unit = KEYS[key]
        where = f"{src}.{field}" if field else "never set (NVMe base specification)"
        out.append((key, Criterion(rule, metric, op, lim[key], unit, source=f"{where}: {what}")))
    return out


def skip_reason(key: str, tier: EngineProfile) -> str | None:
    """Why this deployment cannot measure ``key`` (declared by its profile), or None."""
    if key in ("cache-capacity", "tier-growth") and tier.cache is None:
        return f"{tier.name} has no external KV tier (cache: null): there is no tier size to hold to a cap"
    if (
        key in ("cache-capacity", "tier-growth")
        and tier.cache is not None
        and tier.cache.capacity_bytes is None
    ):
        return f"{tier.name} declares no tier capacity (cache.capacity_bytes)"
    if key == "empty-responses" and tier.fixed_output is None:
        return (
            f"{tier.name} cannot be asked to generate exactly max_tokens (fixed_output: null): "
            "an answer without a token may be the model's own end of sequence"
        )
    if key == "hit-retention" and not (tier.metrics and tier.hit_counter) and tier.hit_log is None:
        return (
            f"{tier.name} exposes no hit counter on /metrics (hit_counter) and names no log that says its "
            "hits (hit_log): hits cannot be trended"
        )
    return None


def counts_hits_in_log(tier: EngineProfile) -> bool:
    """An engine whose hits the soak counts in its log (its profile's hit_log), having no hit counter."""
    return not (tier.metrics and tier.hit_counter) and tier.hit_log is not None


SLOPES = ("ttft-drift", "throughput-retention", "memory-growth", "tier-growth")


def soaked_profile(config: GateConfig, name: str) -> EngineProfile:
    """The engine G4 soaks for deployment ``name``: its tier profile, or, where that tier cannot hold a
    document set, the profile it names for one that can (G3's capacity ssd-tier): a soak of mixed load
    with document reuse on llama-cpp-disk, whose lookup removes what it finds, filled 0.25 % of its tier."""
    tier = config.engine(config.inventory.inventory.engines[name].tier_profile)
    holds_a_set = tier.capacity_arms.ssd_tier if tier.capacity_arms else None
    return config.engine(holds_a_set) if holds_a_set else tier


def plan(config: GateConfig) -> list[G4Check]:
    """G4 checks for every engine deployment on every one of its hosts."""
    inventory = config.inventory.inventory
    if not inventory.engines:
        crit = Criterion("G4-ENG-1", "engine_hosts", ">", 0, source="inventory: engines")
        why = "the inventory declares no engine deployment (engines:): G4 has nothing to soak"
        return [g4_check(CLUSTER, "", "engines", "engines", crit, ruled=Ruling.invalid(why))]
    profile = config.g4
    checks = []
    for name in inventory.engines:
        tier = soaked_profile(config, name)
        if not inventory.engine_hosts(name):
            crit = Criterion("G4-ENG-1", "engine_hosts", ">", 0, source=f"inventory: engines.{name}.hosts")
            why = f"engines.{name} runs on no host (none listed, none with the engine role)"
            checks.append(
                g4_check(CLUSTER, name, f"engines[{name}].hosts", "hosts", crit, ruled=Ruling.invalid(why))
            )
        for host in inventory.engine_hosts(name):
            for key, crit in criteria(profile):
                skip = skip_reason(key, tier) or (profile.too_short_for_slopes() if key in SLOPES else None)
                ruled = Ruling.skip(skip) if skip else None
                checks.append(g4_check(host, name, f"soak[{name}].{key}", key, crit, ruled=ruled))
    return checks
