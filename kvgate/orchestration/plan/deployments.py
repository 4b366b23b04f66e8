"""The plan of every engine deployment of an inventory: G3's workloads, predicted on this lab's storage.

For each deployment and engine host: the workloads G3 will send (one prompt at a
time, then each concurrency level of the gate profile on an engine that batches),
the storage figures of the tier's volume (:mod:`kvgate.orchestration.plan.inputs`), the
recompute arm's prefill rate, and one :class:`~kvgate.orchestration.plan.model.Prediction` per
workload. What was assumed rather than measured is listed with the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import G3Profile
from kvgate.configuration.gateconfig import GateConfig
from kvgate.orchestration.plan.inputs import (
    Serving,
    Sourced,
    TierFigures,
    assumed_storage,
    g2_storage,
    g3_serving,
    latest_passed,
    runs_newest_first,
    state_bytes_per_token,
)
from kvgate.orchestration.plan.model import Prediction, Storage, Workload, predict


@dataclass(frozen=True)
class Options:
    """What a site may declare on the command line (each default is said in the plan's assumptions)."""

    prefill_tok_per_s: float | None = None  # used only where no G3 run measured the recompute arm
    reuse: float = 1.0  # share of each prompt restored from the tier
    documents: int | None = None  # distinct reusable prefixes; None: G3's distinct prompts per load
    dram_hit: float = 0.0  # share of reused prefixes DRAM holds without the SSD tier


@dataclass(frozen=True)
class DeploymentPlan:
    """One deployment on one engine host: its inputs, predictions and assumptions."""

    deployment: str
    host: str
    volume: str
    tier_profile: str
    kv_bytes_per_token: Sourced
    storage: TierFigures
    prefill: Sourced
    decode: Sourced
    predictions: tuple[Prediction, ...]
    assumptions: tuple[str, ...]


def levels(tier: EngineProfile, profile: G3Profile) -> list[tuple[int, int, int]]:
    """(concurrency, prompt tokens, distinct prompts) of every load G3 sends this engine."""
    out = [(1, profile.prompt_tokens, 1)]
    if tier.serves_concurrently:
        tokens = profile.load_prompt_tokens or profile.prompt_tokens
        out += [(c, tokens, c * profile.waves) for c in profile.concurrency]
    return out


def prefill_figure(serving: Serving | None, options: Options) -> Sourced:
    """Measured in G3, else declared, else unknown (recompute TTFT then cannot be predicted)."""
    if serving is not None:
        return serving.prefill_tok_per_s
    if options.prefill_tok_per_s is not None:
        return Sourced(options.prefill_tok_per_s, "declared: --prefill-tok-per-s")
    return Sourced(None, "unknown: no G3 run measured the recompute arm; declare --prefill-tok-per-s")


def plan_deployment(
    config: GateConfig,
    name: str,
    host: str,
    *,
    storage: TierFigures,
    serving: Serving | None,
    options: Options,
) -> DeploymentPlan:
    """The plan of one deployment on one host, from figures already gathered (pure)."""
    dep, profile = config.inventory.inventory.engines[name], config.g3
    tier = config.engine(dep.tier_profile)
    kvb, prefill = state_bytes_per_token(dep, tier), prefill_figure(serving, options)
    decode = serving.decode_s if serving else Sourced(None, "unknown: no G3 run (capacity gain is TTFT-only)")
    predictions: list[Prediction] = []
    if storage.ceiling.value is not None and kvb.value is not None:
        s = Storage(storage.ceiling.value, storage.per_request.value)
        for c, tokens, distinct in levels(tier, profile):
            w = Workload(
                kv_bytes_per_token=int(kvb.value),
                prompt_tokens=tokens,
                concurrency=c,
                documents=options.documents or distinct,
                reuse=options.reuse,
                dram_hit=options.dram_hit,
                decode_s=decode.value,
            )
            predictions.append(predict(s, w, prefill_tok_per_s=prefill.value))
    return DeploymentPlan(
        name,
        host,
        dep.volume,
        dep.tier_profile,
        kvb,
        storage,
        prefill,
        decode,
        tuple(predictions),
        assumptions(options, profile),
    )


def assumptions(options: Options, profile: G3Profile) -> tuple[str, ...]:
    """The plan's defaults, said plainly."""
    docs = (
        f"{options.documents} distinct prefixes (--documents)"
        if options.documents
        else f"distinct prefixes = G3's prompts per load (1 per trial; C × {profile.waves} waves per level)"
    )
    return (
        f"reuse {options.reuse:g}: the share of each prompt the tier restores "
        + ("(G3's restore arm restores all of it; --reuse)" if options.reuse == 1 else "(--reuse)"),
        f"DRAM hit {options.dram_hit:g}: "
        + (
            "the document set is sized past DRAM, as the seed's capacity arm (--dram-hit)"
            if options.dram_hit == 0
            else "declared (--dram-hit)"
        ),
        docs,
        "prefills are served in arrival order; restores share the read ceiling and none reads faster "
        "than one request did in G2",
    )


def plan_inventory(config: GateConfig, results: Path, options: Options) -> list[DeploymentPlan]:
    """Every deployment on every engine host, from the latest usable G2 and the latest G3 run."""
    loaded = config.inventory
    inv = loaded.inventory
    g2 = latest_passed(results, loaded.site, "g2", loaded.sha256)
    g3_runs = runs_newest_first(results, loaded.site, "g3", loaded.sha256)
    plans = []
    for name, dep in inv.engines.items():
        for host in inv.engine_hosts(name):
            figures = g2_storage(g2, host, dep.volume) if g2 is not None else None
            serving = next((s for r in g3_runs if (s := g3_serving(r, host, name)) is not None), None)
            storage = figures or assumed_storage(inv, host, dep.volume)
            plans.append(
                plan_deployment(config, name, host, storage=storage, serving=serving, options=options)
            )
    return plans
