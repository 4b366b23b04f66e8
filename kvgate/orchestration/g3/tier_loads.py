"""A load on fresh tier engines: populate, prove write-through, make cold, measure (R1's cold read).

Per trial (its own salt), engines of one tier profile start on fresh tier directories
(one per environment given, usually one: R1 runs on one card); the load generator sends
C distinct prompts, request i to engine i mod N, all in flight; together the engines'
tier directories must grow by what the prompts' state bytes predict (write-through); then
the engines are made cold (restart, or their reset endpoints), the page cache is dropped,
and the same prompts are sent again, bracketed by the candidate volume's device read
bytes, every engine's process-tree read bytes and its hit counter (/metrics, or its log
where the engine has no counter): :mod:`kvgate.orchestration.g3.window`. A load whose evidence fails is
INVALID with the numbers, never PASS.

The engines run where the phase says (``Phase``: its environment and arguments, and the
model, which may not be the deployment's: R1 ran Qwen2.5-32B on one card), so their
served model id is asked of the first one up.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.orchestration.g3.context import DeploymentContext, Phase
from kvgate.orchestration.g3.evidence import shape_reasons, write_through_reason
from kvgate.orchestration.g3.load_arms import Loader, LoadTrial, judged, load_trial
from kvgate.orchestration.g3.window import EngineWindow, cold_load_reason
from kvgate.probes.engines import EngineService, settled_kv_bytes
from kvgate.probes.loadgen import PromptSpec, fit_tokens_per_word


class TierLoads:
    """Loads on fresh tier engines of one deployment on one host (see the module docstring)."""

    phase, artifacts, warm = "tier loads", "tier-loads", False

    def __init__(
        self,
        ctx: DeploymentContext,
        where: Phase,
        *,
        concurrency: int,
        trials: int,
        prompt_tokens: int,
        usage: bool,
    ) -> None:
        """``concurrency``: prompts per trial, all in flight; ``usage``: the engines stream usage."""
        self.ctx, self.where, self.ex, self.setup = ctx, where, ctx.ex, ctx.setup
        self.envs = (where.env,)
        self.state_bytes_per_token = where.state_bytes_per_token or ctx.setup.state_bytes_per_token
        self.trials_n, self.prompt_tokens, self.concurrency = trials, prompt_tokens, concurrency
        p = ctx.profile
        self.loader = Loader(
            ctx.load_site,
            ctx.model_id,
            prompt_tokens,
            ctx.tokens_per_word,
            p.max_tokens,
            1,
            p.request_timeout_s,
            usage,
            p.logprobs,
            fixed_output=ctx.setup.tier.fixed_output,
        )
        self.out: dict[str, list[LoadTrial]] = {}
        self.fitted: dict[str, tuple[float, ...]] = {}  # salt → each prompt's own tokens per word

    def _engine(self, profile: EngineProfile, name: str, slot: int, env: dict[str, str]) -> EngineService:
        where = replace(self.ctx.placement(name, slot), model=self.where.model or self.setup.model)
        return EngineService(self.ex, profile, where, env=env, args=self.where.args)

    def tier_cycle(
        self,
        profile: EngineProfile,
        arm: str,
        name: str,
        t: int,
        salt: str,
        *,
        tokens: list[int | None] | None,
    ) -> dict[str, Any]:
        """Fresh engines of ``profile``: populate, prove write-through, restart + drop caches, ``arm``.

        Then warm, when this phase and the gate profile ask for it. ``tokens`` None: counted
        by these engines. Returns the populate load's document (computed: nothing was cached).
        """
        has_tier = profile.cache is not None
        with ExitStack() as stack:
            tiers = [
                stack.enter_context(self._engine(profile, f"{name}-{i}", 2 * i, env))
                for i, env in enumerate(self.envs)
            ]
            self._serve_model(tiers[0])
            tokens = self._count(tiers, salt) if tokens is None else tokens
            self.ctx.sink.notify(f"{self.phase} trial {t}: populate {len(tiers)} engine(s) ({profile.name})")
            empty = sum(e.kv_dir_bytes() for e in tiers) if has_tier else 0
            populated = self.loader.run(tiers, salt, self.concurrency, self.fitted.get(salt, ()))
            if has_tier:
                known = [n for n in tokens if n is not None]
                predicted = sum(known) * self.state_bytes_per_token if len(known) == len(tokens) else 0
                growth = settled_kv_bytes(tiers, at_least=empty + predicted if predicted else 0) - empty
                wrote = write_through_reason(
                    self.ctx.profile.write_through, growth_bytes=growth, predicted_bytes=predicted
                )
                self.ctx.sink.notify(f"{self.phase} trial {t}: restart + drop caches")
                for e in tiers:
                    e.make_cold()
                drop = self.ctx.he.drop()
                self.ctx.load_site.warm_up()
                self._measure(arm, tiers, t, salt, tokens, dropped=drop.dropped, wrote=wrote)
            if self.warm and (self.ctx.profile.warm or not has_tier):
                self._measure("warm", tiers, t, salt, tokens)
        return populated

    def _serve_model(self, eng: EngineService) -> None:
        """Send the requests to the model these engines serve (the phase's, maybe not the deployment's)."""
        if self.where.model is not None and self.loader.model == self.ctx.model_id:
            served = eng.request("GET", "/v1/models", timeout_s=30).json()["data"][0]["id"]
            self.loader = replace(self.loader, model=served)

    def _count(self, engines: list[EngineService], salt: str) -> list[int | None]:
        """Each prompt's tokens, by the tokenizer of the engine it goes to; first fitted to its target.

        The calibrated ratio is a mean: one prompt lands ±2 % around it with an uneven
        tokenizer (the protocol's _count). Each prompt of ``salt`` is refitted once, and every
        load of ``salt`` then sends the fitted prompts.
        """
        spec = PromptSpec(
            salt=salt, prompt_tokens=self.prompt_tokens, tokens_per_word=self.loader.tokens_per_word
        )
        to = [engines[i % len(engines)] for i in range(self.concurrency)]  # request i's engine
        if salt not in self.fitted:
            first = [self.ctx.tokens(eng, spec.prompt(i)) for i, eng in enumerate(to)]
            if None not in first:
                self.fitted[salt] = tuple(fit_tokens_per_word(spec, c or 1) for c in first)
        prompts = spec.prompts(len(to), self.fitted.get(salt, ()))
        return [self.ctx.tokens(eng, prompt) for eng, prompt in zip(to, prompts, strict=True)]

    def _measure(
        self,
        arm: str,
        engines: list[EngineService],
        t: int,
        salt: str,
        tokens: list[int | None],
        *,
        dropped: bool = False,
        wrote: str | None = None,
    ) -> None:
        self.ctx.sink.notify(f"{self.phase} trial {t}: {arm} on {len(engines)} engine(s)")
        with EngineWindow(self.ctx.he, self.ctx.volume, engines, resident=arm == "warm") as w:
            doc = self.loader.run(engines, salt, self.concurrency, self.fitted.get(salt, ()))
        ev = self.ctx.sink.save(f"{self.artifacts}/trial-{t}/{arm}.loadgen.json", json.dumps(doc))
        min_hit, tolerance = self.ctx.profile.cold.min_hit_ratio, self.ctx.profile.prompt_tolerance
        if not self.loader.usage:  # no usage: the loadgen cannot check the shape, shape_reasons does
            doc = {**doc, "workload_invalid_reason": None}
        client = self.ctx.profile.client
        trial = load_trial(arm, self.concurrency, t, salt, doc=doc, bracket=w, min_hit=min_hit, client=client)
        shapes = shape_reasons(
            doc.get("records") or [], tokens, target=self.prompt_tokens, tolerance=tolerance
        )
        reasons = [trial.invalid_reason, wrote, *shapes]
        known = None if None in tokens else sum(t or 0 for t in tokens)
        if arm not in ("recompute", "warm"):  # a restore: served cold from the SSD
            bpt = self.state_bytes_per_token
            reasons.append(
                cold_load_reason(w, self.ctx.profile.cold, known, bytes_per_token=bpt, dropped=dropped)
            )
        elif arm == "warm" and known and w.hit_tokens is not None and w.hit_tokens < min_hit * known:
            reasons.append(f"warm: the engines served {w.hit_tokens} of {known} prompt tokens from cache")
        elif arm == "recompute" and w.hit_tokens:
            reasons.append(f"recompute: the engines served {w.hit_tokens} prompt tokens from cache")
        trial = judged(trial, reasons, evidence=ev, tokens=known)
        self.out.setdefault(arm, []).append(trial)
