"""The cold-restore protocol on one engine host: recompute, ssd-restore and warm arms, trial by trial.

First, on a deployment with an SSD tier, the **tier probe** (:meth:`ColdRestore.probe_tier`):
one prompt through the whole tier cycle on a fresh engine. When it shows the tier cannot
be measured (no write-through, no hits after the profile's way of making it cold, counters
that do not move), G3 stops there with that reason instead of hours of INVALID restores.

Then per trial (one prompt, its own salt, so no trial can hit another's cache):

1. **recompute**: the recompute engine (no external tier) answers the prompt.
2. **ssd-restore**: a tier engine on a fresh tier directory on the candidate volume
   answers it once (populate); the directory must grow by what the model's state
   bytes per token predict (write-through); then the tier is made cold the profile's
   way (``cold_by``: the engine restarts, or its reset endpoints empty the GPU/CPU
   caches and keep the SSD tier) and the page cache is dropped; the prompt is sent
   again with device, engine-process and engine-hit counters bracketing exactly that
   request.
3. **warm** (optional): the same prompt once more, without restart (resident state).

A tier profile without an external tier (``cache: null``, e.g. vLLM's CPU build, whose
disk connectors need CUDA) has no ssd-restore arm: one engine answers each prompt
once (populate) and again (warm). Engines that batch requests then run the
concurrency levels (:mod:`kvgate.orchestration.g3.load_arms`). Then the capacity arms, the engine
without and with its SSD tier on sessions over shared documents, at every level and, with
several instances, on the whole machine (:mod:`kvgate.orchestration.g3.capacity`: kvgate's own figure,
bound to no reference); and R2/R3 as the seed measured them, the same SSD tier on the deployment's
baseline volume and on the candidate (:mod:`kvgate.orchestration.g3.volumes`). On a deployment
that names a serial and a parallel tier reader, R1's cold read (:mod:`kvgate.orchestration.g3.cold_read`)
runs right after the recompute block, so a reader that cannot start shows early, not after hours.

Arms run in blocks: first every recompute trial and load on the recompute engine,
which then stops, then the tier engines'. No two engines of one instance run at
once: a GPU engine holds most of its devices' memory (``--gpu-memory-utilization``),
so a second one on the same GPUs would not start. The same holds for the whole
machine; the cold-read phase runs one engine at a time anyway.

A fresh tier directory per trial is needed on llama-cpp-python 0.3.36: its
disk cache pops the best prefix match on every lookup, even a one-token (BOS)
match, so populating a second prompt deletes the first one's entry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.engine_series import selector
from kvgate.configuration.gate_profiles import READ_ARMS, G3Profile
from kvgate.orchestration.g3 import client
from kvgate.orchestration.g3.arms import Outcome, Trial, Window
from kvgate.orchestration.g3.capacity import capacity_mismatches, run_capacity
from kvgate.orchestration.g3.cold_read import read_mismatches, run_cold_read
from kvgate.orchestration.g3.context import DeploymentContext, Setup, Sink
from kvgate.orchestration.g3.evidence import shape_reason, write_through_reason
from kvgate.orchestration.g3.load_arms import Loader, LoadTrial, output_mismatches, run_levels
from kvgate.orchestration.g3.plan import cold_read_blocker, measures_levels
from kvgate.orchestration.g3.staging import staging_reason
from kvgate.orchestration.g3.volumes import Site, run_volumes, ssd_tier_profile, volume_mismatches
from kvgate.orchestration.g3.window import EngineWindow, restore_reason
from kvgate.probes import scratch
from kvgate.probes.engines import (
    EngineService,
    MetricsError,
    Snapshot,
    read_pool_missing,
    scrape,
    settled_kv_bytes,
)
from kvgate.probes.loadgen import Comparison, Output, PromptSpec, compare_outputs, fit_tokens_per_word
from kvgate.transport import Executor

CALIBRATION_X = 4  # a long calibration prompt averages the words' token counts


@dataclass(frozen=True)
class TierProbe:
    """What the tier probe found: why each part cannot be measured (None: it can), and its restore."""

    metrics: str | None  # counters the profile names that /metrics does not expose
    tokenizer: str | None  # the engine's tokenizer endpoint counted no tokens
    restore: Trial | None  # the probe prompt's restore; None: the profile has no SSD tier
    staging: str | None = None  # an LMCache engine's CPU pool cannot stage the restores in flight

    @property
    def reason(self) -> str | None:
        """One sentence for every check the probe stops; None when nothing stops them."""
        cycle = self.restore.invalid_reason if self.restore else None
        found = [r for r in (self.metrics, self.tokenizer, cycle, self.staging) if r]
        return f"tier probe: {'; '.join(found)}" if found else None

    def to_dict(self) -> dict[str, object]:
        return {
            "metrics": self.metrics,
            "tokenizer": self.tokenizer,
            "restore": self.restore.to_dict() if self.restore else None,
            "staging": self.staging,
            "reason": self.reason,
        }


@dataclass
class ArmsResult:
    """Every trial of every arm on one host, plus what the comparison needs."""

    trials: dict[str, list[Trial]] = field(default_factory=dict)
    tokens_per_word: float = 1.0
    device: str | None = None
    mismatches: list[str] = field(default_factory=list)
    compared: tuple[int, int] = (0, 0)  # outputs compared: (restored and warm vs recompute, under load)
    load_trials: dict[str, list[LoadTrial]] = field(default_factory=dict)  # arm → trials, every level
    load_mismatches: list[str] = field(default_factory=list)  # outputs under load ≠ recompute's
    capacity_trials: dict[str, list[LoadTrial]] = field(default_factory=dict)  # dram-only/ssd-tier, levels
    whole_trials: dict[str, list[LoadTrial]] = field(default_factory=dict)  # capacity arms, every instance
    near_ties: list[str] = field(default_factory=list)  # outputs that differ only from a near-tie on
    read_trials: dict[str, list[LoadTrial]] = field(default_factory=dict)  # serial vs parallel reader (R1)
    volume_trials: dict[str, list[LoadTrial]] = field(default_factory=dict)  # baseline vs candidate volume
    probe: TierProbe | None = None  # what the tier probe found (ColdRestore.probe_tier)
    unmeasurable: str | None = None  # why the probe stopped the deployment before any arm
    read_unmeasurable: str | None = None  # why R1's readers were not run (the installed LMCache)

    def arm(self, name: str) -> list[Trial]:
        return self.trials.setdefault(name, [])


class ColdRestore:
    """Run the arms of one deployment on one host (see the module docstring)."""

    def __init__(self, ex: Executor, setup: Setup, profile: G3Profile, sink: Sink) -> None:
        self.ex, self.setup, self.profile, self.sink = ex, setup, profile, sink
        self.ctx = DeploymentContext(ex, setup, profile, sink)  # what the arms receive
        self.result = ArmsResult()
        self.fitted: dict[str, float] = {}  # trial salt → tokens per word fitted to its own prompt

    def run(self, *, probe_only: bool = False) -> ArmsResult:
        """Every phase; within each, the recompute engine's block, then the tier engines' block.

        ``probe_only``: the tier probe alone (``kvgate preflight``), in ``result.probe``.
        """
        addr = self.setup.loadgen_address
        if addr is None:
            self.ctx.site = client.on_host(self.ex, self.setup.python, self.setup.work_dir)
        else:
            self.ctx.site = client.on_controller(addr)
        try:
            # a fresh work directory: a tier left by an interrupted run would fake (or hide) write-through
            scratch.create(self.ex, self.setup.work, fresh=True)
            self.ctx.volume = self.ctx.he.resolve(self.setup.work_dir)
            self.result.device = self.ctx.volume.how
            if probe_only:
                self.result.probe = self.probe_tier()
                return self.result
            return self._run()
        finally:
            self.ctx.load_site.close()

    def _run(self) -> ArmsResult:
        if self.setup.tier.cache is not None:
            self.result.probe = self.probe_tier()
            self.result.unmeasurable = self.result.probe.reason
            if self.result.unmeasurable:  # hours of INVALID restores would follow: stop here, say why
                return self.result
        levels = measures_levels(self.setup.tier, self.profile)
        with self._engine(self.setup.recompute, "recompute", 1) as rc:
            assert rc.record is not None
            self.sink.engine("recompute", rc.record)
            self._prepare(rc)
            for t in range(self.profile.trials):
                self.result.arm("recompute").append(self._recompute(rc, t, self._salt(t)))
            if levels:
                self._levels(rc=rc)
        self._cold_read()  # early: a reader that cannot start or read shows before hours of other arms
        if self.setup.tier.cache is None:
            self._warm_only()
        else:
            for t in range(self.profile.trials):
                self._tier_trial(t, self._salt(t))
            if levels:
                with self._engine(self.setup.tier, "load", 0) as eng:
                    self._levels(tier=eng)
        if self.setup.capacity_figure and self.setup.capacity and self.profile.capacity is not None:
            self.result.capacity_trials, self.result.whole_trials = run_capacity(
                self.ctx, self.setup.capacity
            )
        self._volumes()
        restored = self._compare()
        loads = (
            output_mismatches(self.result.load_trials)
            + capacity_mismatches(self.result.capacity_trials)
            + capacity_mismatches(self.result.whole_trials)
            + read_mismatches(self.result.read_trials)
            + volume_mismatches(self.result.volume_trials)
        )
        self.result.compared = (restored.compared, loads.compared)
        self.result.load_mismatches = list(loads.mismatches)
        self.result.mismatches = [*restored.mismatches, *loads.mismatches]
        self.result.near_ties = [*restored.near_ties, *loads.near_ties]
        return self.result

    def _cold_read(self) -> None:
        """R1's readers, where the deployment names them, the gate profile measures them and the
        installed LMCache can read a request's chunks in parallel."""
        readers = tuple(self.setup.readers.values())
        if not readers or cold_read_blocker(readers, self.profile, args=self.setup.read.args) is not None:
            return
        parallel = self.setup.readers[READ_ARMS[1]]
        why = read_pool_missing(self.ex, self.setup.python, parallel)
        if why is not None:
            self.sink.notify(f"cold read not run: {why}")
            self.result.read_unmeasurable = why
            return
        self.result.read_trials = run_cold_read(self.ctx, self.setup.readers)

    def _volumes(self) -> None:
        """R2/R3: the SSD tier on the baseline volume, then on the candidate (g3.volumes)."""
        profile = ssd_tier_profile(self.setup.capacity, self.setup.tier)
        if self.profile.volumes is None or self.setup.baseline is None or profile is None:
            return
        name, work = self.setup.baseline
        scratch.create(self.ex, work, fresh=True)
        assert self.ctx.volume is not None
        sites = {
            "baseline-volume": Site(name, work.path, self.ctx.he.resolve(work.path)),
            "candidate-volume": Site(self.setup.candidate, self.setup.work_dir, self.ctx.volume),
        }
        self.result.volume_trials = run_volumes(self.ctx, profile, sites)

    def _salt(self, t: int) -> str:
        return f"{self.setup.salt}/trial-{t}"

    def _warm_only(self) -> None:
        """A tier profile without an external tier: one engine; each prompt populated, then sent warm."""
        with self._engine(self.setup.tier, "tier", 0) as eng:
            assert eng.record is not None
            self.sink.engine("warm", eng.record)
            for t in range(self.profile.trials):
                salt = self._salt(t)
                tokens = self._count(eng, salt)
                _, ev = self._send(eng, salt, f"trial-{t}/populate")
                out, wev = self._send(eng, salt, f"trial-{t}/warm")
                shape = self._shape(tokens, out)
                self.result.arm("warm").append(
                    Trial("warm", t, salt, out, tokens, invalid_reason=shape, evidence=ev + wev)
                )
            if measures_levels(self.setup.tier, self.profile):
                self._levels(tier=eng)

    def _levels(self, *, rc: EngineService | None = None, tier: EngineService | None = None) -> None:
        """Concurrency 8/16 (the profile's levels): the recompute block, or the tier engine's block."""
        p = self.profile
        loader = Loader(
            self.ctx.load_site,
            self.ctx.model_id,
            p.load_prompt_tokens or p.prompt_tokens,
            self.ctx.tokens_per_word,
            p.max_tokens,
            p.waves,
            p.request_timeout_s,
            logprobs=p.logprobs,
            fixed_output=self.setup.tier.fixed_output,
        )
        measured = run_levels(
            self.ctx.he,
            loader,
            p,
            rc=rc,
            tier=tier,
            volume=self.ctx.volume,
            salt=f"{self.setup.salt}/load",
            save=self.sink.save,
            notify=self.sink.notify,
            state_bytes_per_token=self.setup.state_bytes_per_token,
        )
        for arm, trials in measured.items():
            self.result.load_trials.setdefault(arm, []).extend(trials)

    # -- arms ---------------------------------------------------------------------------------
    def _recompute(self, rc: EngineService, t: int, salt: str) -> Trial:
        self.sink.notify(f"trial {t}: recompute")
        tokens = self._count(rc, salt)
        out, ev = self._send(rc, salt, f"trial-{t}/recompute")
        return Trial("recompute", t, salt, out, tokens, invalid_reason=self._shape(tokens, out), evidence=ev)

    def probe_tier(self) -> TierProbe:
        """What makes this deployment unmeasurable, found with one prompt on a fresh tier engine.

        Its /metrics must expose the counters its profile names, the gate profile must count
        its tokens, and, where it has an SSD tier, one prompt goes through the whole tier cycle
        (populate, make cold the profile's way, restore) judged as a trial is, and an LMCache
        engine's CPU pool must stage the restores the gate drives at once
        (:mod:`kvgate.orchestration.g3.staging`). G3 runs it
        before any arm and stops when it fails; ``kvgate preflight`` runs it alone.
        """
        self.sink.notify("tier probe: one prompt through populate, make cold, restore")
        with self._engine(self.setup.tier, "probe", 0) as eng:
            assert eng.record is not None
            self.sink.engine("probe", eng.record)
            self._prepare(eng)
            tokenizer = None
            if not self.ctx.tokens(
                eng, "kvgate counts this probe's tokens"
            ):  # the endpoint answers, and counts
                tokenizer = f"{eng.profile.tokenize.path} counted no tokens (HTTP error or an empty list)"
            has_tier = eng.profile.cache is not None
            restore = self._tier_cycle(eng, "probe", f"{self.setup.salt}/probe") if has_tier else None
            staging = staging_reason(self.setup, self.profile)
            return TierProbe(self._metrics_missing(eng), tokenizer, restore, staging)

    def _metrics_missing(self, eng: EngineService) -> str | None:
        """Which of the counters the profile names its /metrics does not expose."""
        p = eng.profile
        if p.metrics is None:
            return None
        wanted = [w for w in (p.hit_counter, p.warm_hit_counter) if w]
        try:
            snap = scrape(self.ex, eng.placement.python, eng.url(p.metrics.path))
        except MetricsError as exc:
            return f"its /metrics cannot be read: {exc}"
        missing = [w for w in wanted if not _has_series(snap, w)]
        if p.ttft_histogram and not snap.has(f"{p.ttft_histogram}_bucket"):
            missing.append(p.ttft_histogram)
        return f"its /metrics has no {', '.join(missing)}" if missing else None

    def _tier_trial(self, t: int, salt: str) -> None:
        """Populate on a fresh tier directory, prove write-through, make cold, restore, then warm."""
        with self._engine(self.setup.tier, f"tier-{t}", 0) as eng:
            assert eng.record is not None
            if t == 0:
                self.sink.engine("ssd-restore", eng.record)
            restored = self._tier_cycle(eng, f"trial-{t}", salt, index=t)
            self.result.arm("ssd-restore").append(restored)
            tokens = restored.prompt_tokens
            if self.profile.warm:
                out, wev = self._send(eng, salt, f"trial-{t}/warm")
                warm = Trial(
                    "warm", t, salt, out, tokens, invalid_reason=self._shape(tokens, out), evidence=wev
                )
                self.result.arm("warm").append(warm)

    def _tier_cycle(self, eng: EngineService, name: str, salt: str, *, index: int = 0) -> Trial:
        """One prompt on ``eng``'s fresh tier: populate, prove write-through, make cold, restore."""
        tokens = self._count(eng, salt)
        predicted = (tokens or 0) * self.setup.state_bytes_per_token
        growth, ev = self._populate(eng, name, salt, predicted)
        wrote = write_through_reason(
            self.profile.write_through, growth_bytes=growth, predicted_bytes=predicted
        )
        self.sink.notify(f"{name}: make cold ({eng.profile.cold_by}) + drop caches")
        cold_by, restart_s = eng.make_cold()
        restored = self._restore(eng, name, salt, tokens, predicted, index=index)
        return replace(
            restored,
            cache_growth_bytes=growth,
            restart_to_ready_s=restart_s,
            cold_by=cold_by,
            invalid_reason=_join(wrote, restored.invalid_reason),
            evidence=ev + restored.evidence,
        )

    def _populate(
        self, eng: EngineService, name: str, salt: str, predicted: int
    ) -> tuple[int, tuple[str, ...]]:
        """Send the prompt once (a miss that the tier saves); the tier directory's growth, writes drained."""
        self.sink.notify(f"{name}: populate")
        empty = eng.kv_dir_bytes()
        _, ev = self._send(eng, salt, f"{name}/populate")
        return settled_kv_bytes([eng], at_least=empty + predicted if predicted else 0) - empty, ev

    def _restore(
        self, eng: EngineService, name: str, salt: str, tokens: int | None, predicted: int, *, index: int
    ) -> Trial:
        """Drop the page cache, then send the prompt with counters bracketing exactly that request."""
        drop = self.ctx.he.drop()
        self.ctx.load_site.warm_up()
        self.sink.notify(f"{name}: cold restore")
        with EngineWindow(self.ctx.he, self.ctx.volume, [eng]) as w:
            out, ev = self._send(eng, salt, f"{name}/ssd-restore")
        assert w.counts is not None
        ev += (self.sink.save(f"{name}/ssd-restore.engine-log.txt", w.logs[0]),)
        window = Window(
            device=w.counts.counted_on,
            device_read_bytes=w.device_read_bytes,
            engine_read_bytes=w.engine_read_bytes,
            hit_tokens=w.hit_tokens,
            caches_dropped=drop.dropped,
            host_load=w.counts.host_load,
            engine_counted="; ".join(w.counts.engines_counted) or None,
        )
        ev += (self.sink.save(f"{name}/ssd-restore.window.json", _window_json(window, predicted, drop.how)),)
        cold = restore_reason(
            self.profile.cold,
            w.counts,
            predicted_bytes=predicted,
            prompt_tokens=tokens or 0,
            hit_tokens=w.hit_tokens,
            caches_dropped=drop.dropped,
        )
        reason = _join(cold, self._shape(tokens, out))
        return Trial(
            "ssd-restore", index, salt, out, tokens, window, predicted, invalid_reason=reason, evidence=ev
        )

    # -- helpers ------------------------------------------------------------------------------
    def _engine(self, profile: EngineProfile, name: str, slot: int) -> EngineService:
        """An engine of the first instance (its environment)."""
        return EngineService(
            self.ex,
            profile,
            self.ctx.placement(name, slot),
            env=self.setup.envs[0],
            args=self.setup.engine_args,
        )

    def _spec(self, salt: str) -> PromptSpec:
        tpw = self.fitted.get(salt, self.ctx.tokens_per_word)
        return PromptSpec(salt=salt, prompt_tokens=self.profile.prompt_tokens, tokens_per_word=tpw)

    def _prepare(self, eng: EngineService) -> None:
        """The served model's id and the tokenizer's words per token, from the first engine up."""
        if not self.ctx.model_id:
            self.ctx.model_id = eng.request("GET", "/v1/models", timeout_s=30).json()["data"][0]["id"]
            self.ctx.tokens_per_word = self.result.tokens_per_word = self._calibrate(eng)

    def _calibrate(self, eng: EngineService) -> float:
        """Tokens per prompt word for this engine's tokenizer, from a prompt CALIBRATION_X times as long."""
        words = CALIBRATION_X * self.profile.prompt_tokens
        spec = PromptSpec(salt=f"{self.setup.salt}/calibrate", prompt_tokens=words)
        n = self.ctx.tokens(eng, spec.prompt(0))
        return fit_tokens_per_word(spec, n) if n else 1.0

    def _count(self, eng: EngineService, salt: str) -> int | None:
        """The trial prompt's length in the engine's tokens; its word count is first fitted to it.

        The calibrated ratio is a mean: one ~1000-word prompt of a tokenizer that splits words
        unevenly lands ±2 % around it (seen here: 2034–2152 tokens for 2048). The words of a
        prompt are a prefix-stable draw, so refitting on the prompt itself brings it within a
        few tokens; every arm then sends the same fitted prompt for this salt.
        """
        if salt not in self.fitted and (first := self.ctx.tokens(eng, self._spec(salt).prompt(0))):
            self.fitted[salt] = fit_tokens_per_word(self._spec(salt), first)
        return self.ctx.tokens(eng, self._spec(salt).prompt(0))

    def _send(self, eng: EngineService, salt: str, name: str) -> tuple[Outcome, tuple[str, ...]]:
        spec, p = self._spec(salt), self.profile
        req = client.Request(
            url=self.ctx.load_site.url(eng),
            model=self.ctx.model_id,
            salt=salt,
            prompt_tokens=spec.prompt_tokens,
            tokens_per_word=spec.tokens_per_word,
            max_tokens=p.max_tokens,
            timeout_s=p.request_timeout_s,
            logprobs=p.logprobs,
            fixed_output=eng.profile.fixed_output,
        )
        out, raw = self.ctx.load_site.send(req, "req.json")
        if not out.ok:
            eng.ensure_alive()  # a crashed engine is an ERROR with its log tail, not a failed request
        return out, (self.sink.save(f"{name}.loadgen.json", raw),)

    def _shape(self, tokens: int | None, out: Outcome) -> str | None:
        p = self.profile
        return shape_reason(
            prompt_tokens=tokens,
            target=p.prompt_tokens,
            tolerance=p.prompt_tolerance,
            finish_reason=out.finish_reason,
        )

    def _compare(self) -> Comparison:
        """Restored and warm outputs against recompute's, by salt."""
        expected = {t.salt: _output(t.outcome) for t in self.result.arm("recompute") if t.outcome.ok}
        found = Comparison()
        for arm in ("ssd-restore", "warm"):
            got = {t.salt: _output(t.outcome) for t in self.result.trials.get(arm, []) if t.outcome.ok}
            found += compare_outputs(expected, got, got_name=arm).named(f"{arm} ")
        return found


def _output(o: Outcome) -> Output:
    return Output(o.text, o.logprobs)


def _join(*reasons: str | None) -> str | None:
    return "; ".join(r for r in reasons if r) or None


def _window_json(w: Window, predicted: int, drop_how: str) -> str:
    data = {**w.__dict__, "predicted_bytes": predicted, "drop_caches": drop_how}
    return json.dumps(data, indent=1)


def _has_series(snap: Snapshot, wanted: str) -> bool:
    """Whether a scrape has the series a profile's selector names (``name`` or ``name{label="v"}``)."""
    name, labels = selector(wanted)
    try:
        snap.value(name, **labels)
    except MetricsError:
        return False
    return True
