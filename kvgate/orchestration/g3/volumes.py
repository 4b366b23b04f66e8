"""R2/R3 as the seed's reports measured them: the same SSD tier on the baseline volume and on the candidate.

R2 (``reports/en/kvcache-480b-tp8-long-context-EN.md`` §2.3, §3, Appendix A) and R3
(``reports/en/kvcache-480b-tp4x2-all-metrics-EN.md`` §3, §5.1) compare LMCache's disk tier on
local NVMe with the same tier on the array: same engine and settings, only the medium
differs. Per volume (``baseline-volume``, then ``candidate-volume``), on a fresh engine of
the deployment's ssd-tier profile whose tier lies on that volume, with the gate profile's
engine settings (``volumes.engine``: prefix caching off, CPU tier 4 GB, chunk 256 at full scale):

1. populate: ``volumes.sessions`` distinct prompts, one after the other; the tier directory
   must grow by what their state bytes predict (the settle step waits for that size);
2. per level N of ``volumes.concurrency``: the engine made cold (its profile's way), the page
   cache dropped, then sessions 0..N−1 once each, a single wave at concurrency N, bracketed
   by that volume's own device read bytes, the engine's process-tree read bytes and its hit
   tokens; the load is INVALID unless device and engine bytes reach ``cold.min_read_ratio`` of
   Σ prompt tokens × state bytes per token with the drop done (the restore proof of R1);
3. with two or more instances, R3's whole machine: one engine per instance, sessions split
   over them (session i on instance i mod n), each level of ``volumes.whole_machine`` a wave
   over all of them together (arms ``<arm>-whole``).

Throughput is the load generator's: output tokens ÷ the wave's wall time (the seed's
N × 64 ÷ batch time, with the tokens counted). Restored outputs must equal the populate's
first token-for-token where both exist (near-ties aside): checked arm against arm.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass, replace

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import VOLUME_ARMS, WHOLE_VOLUME_ARMS
from kvgate.orchestration.g3.context import DeploymentContext
from kvgate.orchestration.g3.evidence import shape_reasons, write_through_reason
from kvgate.orchestration.g3.load_arms import Loader, LoadTrial, judged, load_trial, output_mismatches
from kvgate.orchestration.g3.window import EngineWindow, cold_load_reason
from kvgate.probes.engines import EngineService, settled_kv_bytes
from kvgate.probes.evidence import Resolved
from kvgate.probes.loadgen import Comparison, PromptSpec, fit_tokens_per_word


@dataclass(frozen=True)
class Site:
    """Where one arm's tier lives: a fresh directory on its volume, and the devices that carry it."""

    volume: str  # the inventory's name
    work_dir: str
    resolved: Resolved


class VolumeRun:
    """The volume arms of one deployment on one host (see the module docstring)."""

    def __init__(self, ctx: DeploymentContext, profile: EngineProfile, sites: dict[str, Site]) -> None:
        vc = ctx.profile.volumes
        assert vc is not None
        self.ctx, self.setup, self.vc, self.profile, self.sites = ctx, ctx.setup, vc, profile, sites
        p = ctx.profile
        self.loader = Loader(
            ctx.load_site,
            ctx.model_id,
            vc.prompt_tokens,
            ctx.tokens_per_word,
            vc.max_tokens,
            1,
            p.request_timeout_s,
            profile.streams_usage,
            p.logprobs,
            fixed_output=profile.fixed_output,
        )
        self.salt = f"{self.setup.salt}/volumes"
        self.fitted: tuple[float, ...] = ()
        self.tokens: list[int | None] = []  # session i's prompt tokens, by the engines' tokenizer
        self.out: dict[str, list[LoadTrial]] = {}

    def run(self) -> dict[str, list[LoadTrial]]:
        """Arm → its loads, one per level: each volume alone, then (R3) the whole machine."""
        settings = self.vc.engine.get(self.profile.kind)
        env, args = (settings.env, settings.args) if settings else ({}, ())
        one = ({**self.setup.capacity_env, **env},)  # R2 ran one engine on the whole node (TP8)
        for arm in VOLUME_ARMS:
            self._arm(arm, arm, one, self.vc.concurrency, (*self.setup.capacity_args, *args))
        if len(self.setup.envs) > 1 and self.vc.whole_machine and self.profile.serves_concurrently:
            envs = tuple({**e, **env} for e in self.setup.envs)
            for arm, on in zip(WHOLE_VOLUME_ARMS, VOLUME_ARMS, strict=True):
                self._arm(arm, on, envs, self.vc.whole_machine, (*self.setup.engine_args, *args))
        return self.out

    def _arm(
        self,
        arm: str,
        on: str,
        envs: tuple[dict[str, str], ...],
        levels: tuple[int, ...],
        args: tuple[str, ...],
    ) -> None:
        """Fresh engines with their tier on volume ``on``: populate, then every level's wave."""
        site = self.sites[on]
        with ExitStack() as stack:
            engines = [
                stack.enter_context(self._engine(site, f"{arm}-{i}", 2 * i, env, args))
                for i, env in enumerate(envs)
            ]
            assert engines[0].record is not None
            self.ctx.sink.engine(arm, engines[0].record)
            wrote = self._populate(arm, engines)
            for n in levels:
                self._level(arm, engines, n, site, wrote)

    def _engine(
        self, site: Site, name: str, slot: int, env: dict[str, str], args: tuple[str, ...]
    ) -> EngineService:
        where = self.ctx.placement(name, slot, under=site.work_dir)
        return EngineService(self.ctx.ex, self.profile, where, env=env, args=args)

    def _populate(self, arm: str, engines: list[EngineService]) -> str | None:
        """Every session once, one per engine at a time; why the tier did not write them through."""
        n = len(engines)
        count = n * -(-self.vc.sessions // n)  # whole waves: session i goes to engine i mod n
        tokens = self._count(engines, count)
        self.ctx.sink.notify(f"volumes {arm}: populate {count} sessions")
        empty = sum(e.kv_dir_bytes() for e in engines)
        loader = replace(self.loader, waves=count // n, max_tokens=self.vc.populate_max_tokens)
        loader.run(engines, self.salt, n, self.fitted)
        known = [t for t in tokens if t is not None]
        predicted = sum(known) * self.setup.state_bytes_per_token if len(known) == count else 0
        grew = settled_kv_bytes(engines, at_least=empty + predicted if predicted else 0) - empty
        bounds = self.ctx.profile.write_through
        return write_through_reason(bounds, growth_bytes=grew, predicted_bytes=predicted)

    def _count(self, engines: list[EngineService], count: int) -> list[int | None]:
        """Sessions 0..count−1 fitted to their target by the engines' tokenizer, then counted."""
        spec = PromptSpec(
            salt=self.salt, prompt_tokens=self.vc.prompt_tokens, tokens_per_word=self.loader.tokens_per_word
        )
        to = [engines[i % len(engines)] for i in range(count)]
        if len(self.fitted) < count:
            first = [self.ctx.tokens(e, spec.prompt(i)) for i, e in enumerate(to)]
            if None not in first:
                self.fitted = tuple(fit_tokens_per_word(spec, c or 1) for c in first)
        prompts = spec.prompts(count, self.fitted)
        if len(self.tokens) < count:
            self.tokens = [self.ctx.tokens(e, p) for e, p in zip(to, prompts, strict=True)]
        return self.tokens[:count]

    def _level(self, arm: str, engines: list[EngineService], n: int, site: Site, wrote: str | None) -> None:
        """Make cold, drop the page cache, one wave of sessions 0..n−1 proven cold by bytes on ``site``."""
        for e in engines:
            e.make_cold()
        drop = self.ctx.he.drop()
        self.ctx.load_site.warm_up()
        self.ctx.sink.notify(f"volumes {arm}@c{n}: {n} sessions, one wave")
        with EngineWindow(self.ctx.he, site.resolved, engines, per_request=True) as w:
            doc = self.loader.run(engines, self.salt, n, self.fitted)
        ev = self.ctx.sink.save(f"volumes/{arm}-c{n}.loadgen.json", json.dumps(doc))
        if not self.loader.usage:  # no usage: the loadgen cannot check the shape, shape_reasons does
            doc = {**doc, "workload_invalid_reason": None}
        min_hit = self.ctx.profile.cold.min_hit_ratio
        client = self.ctx.profile.client
        trial = load_trial(arm, n, 0, self.salt, doc=doc, bracket=w, min_hit=min_hit, client=client)
        tokens = self.tokens[:n]
        known = None if None in tokens else sum(t or 0 for t in tokens)
        p = self.ctx.profile
        cold = cold_load_reason(
            w, p.cold, known, bytes_per_token=self.setup.state_bytes_per_token, dropped=drop.dropped
        )
        records = doc.get("records") or []
        shapes = shape_reasons(records, tokens, target=self.vc.prompt_tokens, tolerance=p.prompt_tolerance)
        trial = judged(trial, [trial.invalid_reason, wrote, cold, *shapes], evidence=ev, tokens=known)
        self.out.setdefault(arm, []).append(trial)


def run_volumes(
    ctx: DeploymentContext, profile: EngineProfile, sites: dict[str, Site]
) -> dict[str, list[LoadTrial]]:
    """Every load of the volume arms: arm → its loads, one per level."""
    return VolumeRun(ctx, profile, sites).run()


def volume_mismatches(trials: dict[str, list[LoadTrial]]) -> Comparison:
    """The candidate volume's restored outputs against the baseline volume's, session by session."""
    return output_mismatches(trials, expected_arm=VOLUME_ARMS[0], arms=(VOLUME_ARMS[1],)) + output_mismatches(
        trials, expected_arm=WHOLE_VOLUME_ARMS[0], arms=(WHOLE_VOLUME_ARMS[1],)
    )


def ssd_tier_profile(capacity: dict[str, EngineProfile], tier: EngineProfile) -> EngineProfile | None:
    """The profile whose SSD tier the volume arms put on each volume: the capacity arms' ssd-tier, or the
    tier profile; None without an external tier."""
    found = capacity.get("ssd-tier") or tier
    return found if found.cache is not None else None
