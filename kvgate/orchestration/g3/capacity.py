"""G3's capacity arms (R2/R3): the engine without its SSD tier (dram-only) against with it (ssd-tier).

The seed's TTFT ↓26–32 % and throughput +29–40 % / +35–36 % are gains of capacity
expansion ("容量扩展与延迟改善可以同向发生"): its baseline kept the HBM/DRAM prefix cache
and lacked the SSD tier, on long-context work that reuses prefixes. So both arms run the
same engine on the same turns (:mod:`kvgate.probes.agent.sessions`: shared documents visited
round-robin, a declared reuse rate), each arm on its own fresh engine — the profiles its
tier profile names under ``capacity_arms`` — one arm after the other (never two engines
on one GPU group):

1. warm-up: every document once, not measured; the tier's writes drained;
2. per level C of ``capacity.concurrency`` and round k: the page cache dropped (it is DRAM
   outside either arm's tier), then the next C turns at concurrency C, bracketed like every
   G3 load (:class:`kvgate.orchestration.g3.window.EngineWindow`): the candidate's device and the
   engines' process-tree read bytes, and the prompt tokens the engines reused;
3. with two or more instances, the whole machine (R3): one engine per instance, documents
   split over them (document d on instance d mod N), ``whole_machine.rounds`` rounds of
   N × per-instance turns.

Both arms send identical turns, so their outputs must agree (near-ties aside). A round's
numbers are INVALID when its evidence says it did not compare capacity
(:func:`capacity_reason`).
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import CAPACITY_ARMS
from kvgate.orchestration.g3.context import DeploymentContext
from kvgate.orchestration.g3.evidence import capacity_reason, dram_held_reason, shape_reasons
from kvgate.orchestration.g3.load_arms import LoadTrial, judged, load_trial, output_mismatches
from kvgate.orchestration.g3.window import EngineWindow
from kvgate.probes.agent import Sessions
from kvgate.probes.engines import EngineService, settled_kv_bytes
from kvgate.probes.loadgen import Comparison, fit_tokens_per_word


@dataclass(frozen=True)
class Turns:
    """A span of turns of one run's sessions: where it starts, how many, how many in flight."""

    first: int
    count: int
    concurrency: int

    @property
    def span(self) -> range:
        return range(self.first, self.first + self.count)


class CapacityRun:
    """The capacity arms of one deployment on one host (see the module docstring)."""

    def __init__(self, ctx: DeploymentContext, arms: dict[str, EngineProfile]) -> None:
        cap = ctx.profile.capacity
        assert cap is not None
        self.ctx, self.setup, self.cap, self.arms = ctx, ctx.setup, cap, arms
        self.prompt_tokens = cap.prompt_tokens or ctx.profile.prompt_tokens
        self.levels: dict[str, list[LoadTrial]] = {}  # arm → its rounds at every level
        self.whole: dict[str, list[LoadTrial]] = {}  # arm → its rounds on the whole machine
        self.tokens: dict[str, int | None] = {}  # text → its tokens (the engines' tokenizer)
        self.sessions = self._sessions("capacity")

    def run(self) -> tuple[dict[str, list[LoadTrial]], dict[str, list[LoadTrial]]]:
        """Arm → its measured rounds at every level, and on the whole machine (two or more instances)."""
        for arm, profile in self.arms.items():
            self._levels(arm, profile)
        wm = self.ctx.profile.whole_machine
        if len(self.setup.envs) > 1 and wm is not None:
            self.sessions = self._sessions("capacity-whole")
            for arm, profile in self.arms.items():
                self._whole(arm, profile, wm.per_instance_concurrency, wm.rounds)
        return self.levels, self.whole

    def _sessions(self, phase: str) -> Sessions:
        tpw = self.ctx.tokens_per_word
        return Sessions(
            f"{self.setup.salt}/{phase}", self.cap.documents, self.prompt_tokens, self.cap.reuse, tpw
        )

    def _levels(self, arm: str, profile: EngineProfile) -> None:
        """One engine of ``arm`` (the capacity placement): warm-up, then every level's rounds."""
        env, args = self.setup.capacity_env, self.setup.capacity_args
        with self._engine(profile, f"capacity-{arm}", 0, env, args) as eng:
            assert eng.record is not None
            self.ctx.sink.engine(arm, eng.record)
            turn = self._warm_up([eng], max(self.cap.concurrency))
            for c in self.cap.concurrency:
                for k in range(self.cap.rounds):
                    self._round(arm, [eng], Turns(turn, c, c), k, self.levels)
                    turn += c
                self._held(self.levels[arm], self.cap.rounds)

    def _whole(self, arm: str, profile: EngineProfile, per: int, rounds: int) -> None:
        """One engine of ``arm`` per instance, driven together: warm-up, then the rounds."""
        per = per if profile.serves_concurrently else 1
        args = self.setup.engine_args
        with ExitStack() as stack:
            engines = [
                stack.enter_context(self._engine(profile, f"capacity-{arm}-{i}", 2 * i, env, args))
                for i, env in enumerate(self.setup.envs)
            ]
            n = per * len(engines)
            turn = self._warm_up(engines, n)
            for k in range(rounds):
                self._round(arm, engines, Turns(turn, n, n), k, self.whole)
                turn += n
            self._held(self.whole[arm], rounds)

    def _held(self, trials: list[LoadTrial], rounds: int) -> None:
        """The level's last ``rounds`` dram-only rounds are INVALID together when its DRAM held the set."""
        level = trials[-rounds:]
        if not level or level[0].arm != CAPACITY_ARMS[0]:
            return
        reused, reusable = sum(t.hit_tokens or 0 for t in level), sum(t.reusable_tokens or 0 for t in level)
        why = dram_held_reason(self.cap, reused=reused, reusable=reusable)
        if why:
            trials[-rounds:] = [
                replace(t, invalid_reason="; ".join(filter(None, (t.invalid_reason, why)))) for t in level
            ]

    def _engine(
        self, profile: EngineProfile, name: str, slot: int, env: dict[str, str], args: tuple[str, ...]
    ) -> EngineService:
        where = self.ctx.placement(name, slot)
        return EngineService(self.ctx.ex, profile, where, env=env, args=args)

    def _fit_documents(self, engines: list[EngineService]) -> None:
        """Each document fitted to its share of a prompt by the engines' tokenizer (once per phase)."""
        s = self.sessions
        if s.document_ratios:
            return
        ratios = []
        for d in range(s.documents):
            spec = s.document_spec(d)
            n = self._count(engines, d, spec.prompt(0))
            ratios.append(fit_tokens_per_word(spec, n) if n else s.tokens_per_word)
        self.sessions = replace(s, document_ratios=tuple(ratios))

    def _warm_up(self, engines: list[EngineService], concurrency: int) -> int:
        """Every document once (not measured); the tier's writes drained. Returns the next turn."""
        self._fit_documents(engines)
        what = f"{self.cap.documents} documents on {engines[0].profile.name}"
        self.ctx.sink.notify(f"capacity: warm-up, {what}")
        self._send(engines, Turns(0, self.cap.documents, concurrency))
        tiers = [e for e in engines if e.profile.cache is not None]
        if tiers:
            settled_kv_bytes(tiers)
        return self.cap.documents

    def _round(
        self, arm: str, engines: list[EngineService], turns: Turns, k: int, into: dict[str, list[LoadTrial]]
    ) -> None:
        """Drop the page cache, then one round's turns with every counter bracketing them."""
        where = f"{arm}@c{turns.concurrency}" if into is self.levels else f"{arm}@whole"
        usage = all(e.profile.streams_usage for e in engines)
        counted = [self._count(engines, j, self.sessions.prompt(j)) for j in turns.span] if not usage else []
        reusable = [self._count(engines, j, self.sessions.document_text(j)) for j in turns.span]
        drop = self.ctx.he.drop()
        self.ctx.load_site.warm_up()
        self.ctx.sink.notify(f"capacity {where} round {k}: {turns.count} turns")
        with EngineWindow(self.ctx.he, self.ctx.volume, engines, resident=True, per_request=True) as w:
            doc = self._send(engines, turns)
        name = f"capacity/{where.replace('@', '-')}/round-{k}.loadgen.json"
        ev = self.ctx.sink.save(name, json.dumps(doc))
        if not usage:  # the loadgen's usage-based shape check cannot apply: the tokenizer's counts do
            doc = {**doc, "workload_invalid_reason": None}
        trial = load_trial(
            arm,
            turns.concurrency,
            k,
            self.sessions.salt,
            doc=doc,
            bracket=w,
            min_hit=0,
            client=self.ctx.profile.client,
        )
        known = None if None in reusable else sum(n or 0 for n in reusable)
        tolerance = self.ctx.profile.prompt_tolerance
        shapes = shape_reasons(
            doc.get("records") or [], counted, target=self.prompt_tokens, tolerance=tolerance
        )
        reasons = [trial.invalid_reason, self._evidence(arm, w, known, drop.dropped), *shapes]
        total = None if usage or None in counted else sum(n or 0 for n in counted)
        trial = judged(trial, reasons, evidence=ev, tokens=total)
        into.setdefault(arm, []).append(replace(trial, reusable_tokens=known))

    def _evidence(self, arm: str, w: EngineWindow, reusable: int | None, dropped: bool) -> str | None:
        """What the round's counters say about whether it compared capacity."""
        if reusable is None:
            return "the documents' tokens are unknown (no tokenizer endpoint for this engine)"
        return capacity_reason(
            arm,
            self.cap,
            reused=w.hit_tokens,
            reusable=reusable,
            counts=w.counts,
            state_bytes_per_token=self.setup.state_bytes_per_token,
            min_hit_ratio=self.ctx.profile.cold.min_hit_ratio,
            caches_dropped=dropped,
        )

    def _count(self, engines: list[EngineService], turn: int, text: str) -> int | None:
        """A text's tokens by the tokenizer of the engine its turn goes to (cached: documents repeat)."""
        if text not in self.tokens:
            eng = engines[self.sessions.document(turn) % len(engines)]
            self.tokens[text] = self.ctx.tokens(eng, text)
        return self.tokens[text]

    def _send(self, engines: list[EngineService], turns: Turns) -> dict[str, Any]:
        """The sessions driver on the load site: these turns at their concurrency; its result document."""
        timeout_s, site = self.ctx.profile.request_timeout_s, self.ctx.load_site
        out = site.out("sessions.json")
        argv = self._argv(engines, turns, out)
        timeout_s = timeout_s * turns.count + 120
        return site.drive(argv, out, engines=engines, what="sessions driver", timeout_s=timeout_s)

    def _argv(self, engines: list[EngineService], turns: Turns, out: str) -> list[str]:
        p, s, site = self.ctx.profile, self.sessions, self.ctx.load_site
        usage = all(e.profile.streams_usage for e in engines)
        options = {
            "--model": self.ctx.model_id,
            "--concurrency": str(turns.concurrency),
            "--first-turn": str(turns.first),
            "--turns": str(turns.count),
            "--documents": str(s.documents),
            "--prompt-tokens": str(s.prompt_tokens),
            "--reuse": repr(s.reuse),
            "--tokens-per-word": repr(s.tokens_per_word),
            "--document-ratios": ",".join(repr(r) for r in s.document_ratios),
            "--max-tokens": str(p.max_tokens),
            "--salt": s.salt,
            "--fixed-output": engines[0].profile.fixed_output or "none",
            "--output-tokens-from": "usage" if usage else "chunks",
            "--logprobs": str(p.logprobs),
            "--timeout": repr(p.request_timeout_s),
            "--out": out,
        }
        urls = [a for eng in engines for a in ("--url", site.url(eng))]
        return ["sessions", *urls, *(a for option in options.items() for a in option)]


def run_capacity(
    ctx: DeploymentContext, arms: dict[str, EngineProfile]
) -> tuple[dict[str, list[LoadTrial]], dict[str, list[LoadTrial]]]:
    """Every round of the capacity phase: arm → its rounds at the levels, and on the whole machine."""
    return CapacityRun(ctx, arms).run()


def capacity_mismatches(trials: dict[str, list[LoadTrial]]) -> Comparison:
    """ssd-tier's outputs against dram-only's, turn by turn."""
    return output_mismatches(trials, expected_arm=CAPACITY_ARMS[0], arms=(CAPACITY_ARMS[1],))
