"""G3 at concurrency 8 and 16: every arm under load, on an engine that batches requests.

For each concurrency level C and trial k (its own salt, so nothing is shared with
another level, trial or run), the load generator sends ``C × waves`` distinct
prompts with at most C in flight, as ``vllm bench serve --max-concurrency C``
(every level and trial on the recompute engine first, then on the tier engine):

- **recompute**: to the recompute engine (no external tier, no prefix cache);
- the tier engine gets the same prompts once (populate), then
  - **ssd-restore** (profiles with an external tier): restart + drop the page cache,
    then the same prompts again;
  - **warm**: the same prompts again without restart (resident state).

The tier engine's hit counter (``hit_counter`` in its profile, from /metrics), the
candidate volume's device read bytes and the engine's process-tree read bytes
(``g3.window``) bracket each measured load. A measured load whose hits fall short of
``cold.min_hit_ratio`` of its prompt tokens did not come from the cache; an ssd-restore
load whose device and engine bytes fall short of ``cold.min_read_ratio`` of the populated
prompt tokens × state bytes per token (or whose page-cache drop failed) was not restored
from the SSD: INVALID either way, with the numbers. The recompute arm must show no hits.

>>> level_key("warm", 8), level_key("warm", "whole-machine")
('warm@c8', 'warm@whole')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from kvgate.configuration.gate_profiles import ClientBounds, G3Profile
from kvgate.orchestration.g3.arms import cv
from kvgate.orchestration.g3.client import LoadSite
from kvgate.orchestration.g3.evidence import write_through_reason
from kvgate.orchestration.g3.window import EngineWindow, restore_reason
from kvgate.probes.engines import EngineService, settled_kv_bytes
from kvgate.probes.evidence import Resolved
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.loadgen import Comparison, Output, TokenLogprob, compare_outputs, median, starved_reason
from kvgate.record import ArmFigures

WHOLE_MACHINE = "whole-machine"


def level_key(arm: str, concurrency: int | str) -> str:
    """The arm summary key of one arm at one concurrency level (or the whole machine)."""
    return f"{arm}@whole" if concurrency == WHOLE_MACHINE else f"{arm}@c{concurrency}"


@dataclass(frozen=True)
class LoadTrial:
    """One measured load: C × waves prompts at concurrency C on one arm, with its evidence."""

    arm: str
    concurrency: int
    index: int
    salt: str
    summary: dict[str, Any]  # the load generator's pooled summary (vllm bench serve keys, units in names)
    hit_tokens: int | None  # the engine's hit counter over exactly this load
    device_read_bytes: int | None
    texts: tuple[str, ...]  # outputs in prompt order ("" for a failed request)
    invalid_reason: str | None = None
    evidence: tuple[str, ...] = ()
    logprobs: tuple[tuple[TokenLogprob, ...], ...] = ()  # per prompt, when the load asked for them
    first_tokens_done_s: float | None = None  # from the load's start to its last first token
    engine_read_bytes: int | None = None  # the engines' process-tree read bytes, where bracketed
    counted_prompt_tokens: int | None = None  # by the engines' tokenizer, where the stream has no usage
    server_ttft_mean_s: float | None = None  # the engines' own TTFT histogram over the load (mean)
    server_latency: dict[str, float] | None = (
        None  # the engines' own TTFT/ITL/TPOT (kvgate.probes.engines.latency)
    )
    reusable_tokens: int | None = None  # capacity arms: the prompt tokens its turns' documents hold
    host_load: str | None = None  # the host's load in the window (load average, CPU steal)
    engine_counted: str | None = None  # how the engines' bytes were counted (evidence.window.engine_how)
    shared_device: str | None = None  # the device read far more than the engine: another reader's

    @property
    def read_bw_gb_per_s(self) -> float | None:
        """The engines' own read bytes over the span in which every request got its first token (its
        restore); the device's counters also count every other reader of the device.

        >>> LoadTrial("a", 1, 0, "s", {}, None, 5_000_000_000, (), first_tokens_done_s=0.5,
        ...           engine_read_bytes=2_000_000_000).read_bw_gb_per_s
        4.0
        """
        if self.engine_read_bytes is None or not self.first_tokens_done_s:
            return None
        return self.engine_read_bytes / self.first_tokens_done_s / 1e9

    @property
    def ttft_p50_s(self) -> float | None:
        v = self.summary.get("p50_ttft_ms")
        return None if v is None else float(v) / 1000

    @property
    def throughput(self) -> float | None:
        v = self.summary.get("output_throughput_tok_per_s")
        return float(v) if v is not None and self.summary.get("completed") else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Loader:
    """How to run the load generator (where it runs, the request shape)."""

    site: LoadSite
    model: str
    prompt_tokens: int
    tokens_per_word: float
    max_tokens: int
    waves: int
    timeout_s: float
    usage: bool = True  # the engine streams usage; False: output tokens from chunks
    logprobs: int | None = None  # top-k logprobs per generated token (near-tie check); None: not asked
    fixed_output: str | None = "ignore_eos"  # the engine profile's: exactly max_tokens are generated

    def run(
        self, engines: Sequence[EngineService], salt: str, concurrency: int, fitted: Sequence[float] = ()
    ) -> dict[str, Any]:
        """One load against ``engines`` (request i to engine i mod n); the result document.

        ``fitted``: prompt i's own tokens per word (PromptSpec.prompts), where measured.
        """
        out = self.site.out("load.json")
        n = concurrency * self.waves
        urls = [a for eng in engines for a in ("--url", self.site.url(eng))]
        argv = [
            *urls,
            "--model",
            self.model,
            "--concurrency",
            str(concurrency),
            "--requests",
            str(n),
            "--prompt-tokens",
            str(self.prompt_tokens),
            "--tokens-per-word",
            repr(self.tokens_per_word),
            "--max-tokens",
            str(self.max_tokens),
            "--salt",
            salt,
            "--temperature",
            "0",
            "--timeout",
            repr(self.timeout_s),
            "--out",
            out,
        ]
        if fitted:
            argv += ["--fitted-tokens-per-word", ",".join(repr(f) for f in fitted)]
        argv += ["--fixed-output", self.fixed_output or "none"]
        if not self.usage:
            argv += ["--output-tokens-from", "chunks"]
        if self.logprobs is not None:
            argv += ["--logprobs", str(self.logprobs)]
        timeout_s = self.timeout_s * n + 120
        return self.site.drive(argv, out, engines=engines, what="load generator", timeout_s=timeout_s)


def hit_reason(arm: str, hits: int | None, prompt_tokens: int | None, min_ratio: float) -> str | None:
    """Why a load's hit counter contradicts its arm (None when it agrees or is unknown).

    >>> hit_reason("warm", 100, 1000, 0.9)
    'warm: the engine served 100 of 1000 prompt tokens from cache (10% < 90%): not a cache hit'
    >>> hit_reason("recompute", 512, 1000, 0.9)
    'recompute: the engine served 512 prompt tokens from cache: not a recompute'
    """
    if hits is None or not prompt_tokens:
        return None
    if arm == "recompute":
        return (
            f"recompute: the engine served {hits} prompt tokens from cache: not a recompute" if hits else None
        )
    if hits < min_ratio * prompt_tokens:
        return (
            f"{arm}: the engine served {hits} of {prompt_tokens} prompt tokens from cache "
            f"({hits / prompt_tokens:.0%} < {min_ratio:.0%}): not a cache hit"
        )
    return None


class Counters(Protocol):
    """What a measured load's bracket read: the engine's hit tokens and the device's read bytes."""

    @property
    def hit_tokens(self) -> int | None: ...
    @property
    def device_read_bytes(self) -> int | None: ...
    @property
    def server_ttft_mean_s(self) -> float | None: ...


def load_trial(
    arm: str,
    concurrency: int,
    index: int,
    salt: str,
    *,
    doc: dict[str, Any],
    bracket: Counters,
    min_hit: float,
    client: ClientBounds,
) -> LoadTrial:
    """A measured load from the load generator's document and the bracket's counters; a load whose
    client was starved beyond the profile's ``client`` bounds is not trusted (its lag named)."""
    summary, counts = doc.get("summary") or {}, getattr(bracket, "counts", None)  # EngineWindow's
    records = sorted(doc.get("records") or [], key=lambda r: int(r.get("index", 0)))
    prompt_tokens = summary.get("total_input_tokens")
    reasons = [
        r
        for r in (
            doc.get("workload_invalid_reason"),
            f"{summary.get('failed')} of {len(records)} requests failed" if summary.get("failed") else None,
            hit_reason(arm, bracket.hit_tokens, prompt_tokens, min_hit),
            starved_reason(
                doc.get("client_health"),
                max_lag_p99_ms=client.max_loop_lag_p99_ms,
                max_bunched_share=client.max_bunched_share,
            ),
        )
        if r
    ]
    return LoadTrial(
        arm,
        concurrency,
        index,
        salt,
        summary,
        bracket.hit_tokens,
        bracket.device_read_bytes,
        tuple(r.get("text", "") if r.get("success") else "" for r in records),
        "; ".join(reasons) or None,
        logprobs=tuple(tuple(TokenLogprob(**x) for x in r.get("logprobs") or []) for r in records),
        first_tokens_done_s=first_tokens_done_s(records),
        server_ttft_mean_s=bracket.server_ttft_mean_s,
        server_latency=getattr(bracket, "server_latency", None),  # EngineWindow's; a populate load has none
        engine_read_bytes=counts.engine_read_bytes if counts else None,
        host_load=counts.host_load if counts else None,
        engine_counted="; ".join(counts.engines_counted) or None if counts else None,
    )


def judged(
    trial: LoadTrial, reasons: Sequence[str | None], *, evidence: str, tokens: int | None
) -> LoadTrial:
    """The trial with every reason it cannot be trusted (each once), its evidence file, its prompt tokens."""
    why = "; ".join(dict.fromkeys(r for r in reasons if r)) or None
    return replace(trial, invalid_reason=why, evidence=(evidence,), counted_prompt_tokens=tokens)


def first_tokens_done_s(records: list[dict[str, Any]]) -> float | None:
    """When the last successful request got its first token, from the load's start (records' ns clock).

    >>> first_tokens_done_s([{"success": True, "chunk_ns": [2_000_000_000, 3]}, {"success": False}])
    2.0
    """
    firsts = [int(r["chunk_ns"][0]) for r in records if r.get("success") and r.get("chunk_ns")]
    return max(firsts) / 1e9 if firsts else None


def _tokens_per_request(t: LoadTrial) -> float | None:
    """A load's prompt tokens per completed request: from usage, else from the engine's tokenizer."""
    total = t.summary.get("total_input_tokens") or t.counted_prompt_tokens
    done = t.summary.get("completed")
    return float(total) / done if total and done else None


def summarize_level(arm: str, trials: list[LoadTrial], key: str | None = None) -> ArmFigures:
    """Medians over trials of each trial's TTFT p50 and output throughput (the headline numbers).

    ``key``: the summary's name (default ``<arm>@c<C>``).
    """
    ttft = [t.ttft_p50_s for t in trials if t.ttft_p50_s is not None]
    tput = [t.throughput for t in trials if t.throughput is not None]
    hits = [float(t.hit_tokens) for t in trials if t.hit_tokens is not None]
    dev = [float(t.device_read_bytes) for t in trials if t.device_read_bytes is not None]
    eng = [float(t.engine_read_bytes) for t in trials if t.engine_read_bytes is not None]
    inputs = [n for n in map(_tokens_per_request, trials) if n is not None]
    p90 = [float(t.summary["p90_ttft_ms"]) / 1000 for t in trials if t.summary.get("p90_ttft_ms")]
    p99 = [float(t.summary["p99_ttft_ms"]) / 1000 for t in trials if t.summary.get("p99_ttft_ms")]
    e2e = [float(t.summary["p50_e2el_ms"]) / 1000 for t in trials if t.summary.get("p50_e2el_ms")]
    bw = [t.read_bw_gb_per_s for t in trials if t.read_bw_gb_per_s is not None]
    client_mean = [float(t.summary["mean_ttft_ms"]) / 1000 for t in trials if t.summary.get("mean_ttft_ms")]
    server_mean = [t.server_ttft_mean_s for t in trials if t.server_ttft_mean_s is not None]
    return ArmFigures(
        arm=key or (level_key(arm, trials[0].concurrency) if trials else arm),
        trials=len(trials),
        completed=sum(1 for t in trials if t.summary.get("completed") and not t.summary.get("failed")),
        ttft_p50_s=median(ttft) if ttft else None,
        ttft_p90_s=median(p90) if p90 else None,
        ttft_p99_s=median(p99) if p99 else None,
        ttft_cv=cv(ttft),
        e2e_p50_s=median(e2e) if e2e else None,
        output_throughput_tok_per_s=median(tput) if tput else None,
        prompt_tokens_p50=median(inputs) if inputs else None,
        device_read_bytes_p50=median(dev) if dev else None,
        engine_read_bytes_p50=median(eng) if eng else None,
        hit_tokens_p50=median(hits) if hits else None,
        cache_growth_bytes_p50=None,
        predicted_bytes_p50=None,
        restart_to_ready_p50_s=None,
        invalid_reasons=[f"trial {t.index}: {t.invalid_reason}" for t in trials if t.invalid_reason],
        qualifications=[f"trial {t.index}: {t.shared_device}" for t in trials if t.shared_device],
        read_bw_gb_per_s=median(bw) if bw else None,
        ttft_mean_s=median(client_mean) if client_mean else None,
        server_ttft_mean_s=median(server_mean) if server_mean else None,
    )


def output_mismatches(
    trials: dict[str, list[LoadTrial]],
    expected_arm: str = "recompute",
    arms: tuple[str, ...] = ("ssd-restore", "warm"),
) -> Comparison:
    """Cached outputs against the expected arm's, same prompt, level and trial."""
    expected = _outputs(trials.get(expected_arm, []))
    found = Comparison()
    for arm in arms:
        got = _outputs(trials.get(arm, []))
        got = {k: v for k, v in got.items() if k in expected}  # a failed request is judged elsewhere
        found += compare_outputs(expected, got, got_name=arm, expected_name=expected_arm).named(arm)
    return found


def _outputs(trials: list[LoadTrial]) -> dict[str, Output]:
    """The successful outputs of some loads, keyed ``@c<C> trial <k> prompt <i>``."""
    return {
        f"@c{t.concurrency} trial {t.index} prompt {i}": Output(
            text, t.logprobs[i] if i < len(t.logprobs) else ()
        )
        for t in trials
        for i, text in enumerate(t.texts)
        if text
    }


def run_levels(
    he: HostEvidence,
    loader: Loader,
    profile: G3Profile,
    *,
    rc: EngineService | None,
    tier: EngineService | None,
    volume: Resolved | None,
    salt: str,
    save: Any,
    notify: Any,
    state_bytes_per_token: int = 0,
) -> dict[str, list[LoadTrial]]:
    """Every level × trial of one engine's arms (see the module docstring): the recompute
    engine's (``rc``) or the tier engine's (``tier``). Artifacts through ``save(name, text)``.

    Each ssd-restore load is proven cold by bytes, as every restore in G3: the populate's
    prompt tokens × ``state_bytes_per_token`` must have reached the tier (the settle step
    waits for that size) and come back from the device and through the engine, with the
    page cache dropped; a load shown only by the hit counter is not evidence.
    """
    out: dict[str, list[LoadTrial]] = {}
    min_hit = profile.cold.min_hit_ratio
    has_tier = tier is not None and tier.profile.cache is not None

    def measure(
        arm: str, eng: EngineService, c: int, t: int, s: str, *, proof: Restore | None = None
    ) -> None:
        notify(f"c{c} trial {t}: {arm}")
        with EngineWindow(he, volume, [eng], resident=arm == "warm") as b:
            doc = loader.run([eng], s, c)
        ev = save(f"load-c{c}/trial-{t}/{arm}.loadgen.json", json.dumps(doc))
        trial = load_trial(arm, c, t, s, doc=doc, bracket=b, min_hit=min_hit, client=profile.client)
        cold = proof.reason(profile, b) if proof is not None else None
        why = "; ".join(r for r in (trial.invalid_reason, cold) if r) or None
        out.setdefault(arm, []).append(
            replace(trial, evidence=(ev,), invalid_reason=why, engine_read_bytes=b.engine_read_bytes)
        )

    for c in profile.concurrency:
        for t in range(profile.load_trials):
            s = f"{salt}/c{c}/trial-{t}"
            if rc is not None:
                measure("recompute", rc, c, t, s)
            if tier is None:
                continue
            notify(f"c{c} trial {t}: populate")
            empty = tier.kv_dir_bytes() if has_tier else 0
            populated = loader.run([tier], s, c)
            if has_tier:
                proof = Restore.populated(populated, state_bytes_per_token)
                grew = settled_kv_bytes([tier], at_least=empty + proof.predicted_bytes) - empty
                proof = replace(
                    proof,
                    wrote=write_through_reason(
                        profile.write_through, growth_bytes=grew, predicted_bytes=proof.predicted_bytes
                    ),
                )
                tier.make_cold()
                proof = replace(proof, dropped=he.drop().dropped)
                measure("ssd-restore", tier, c, t, s, proof=proof)
            if profile.warm or not has_tier:
                measure("warm", tier, c, t, s)
    return out


@dataclass(frozen=True)
class Restore:
    """What a restore load must show: the populated prompts' state, written through and read back cold."""

    prompt_tokens: int | None  # the populate's, from usage (None: the engine streams none)
    state_bytes_per_token: int
    wrote: str | None = None  # why the populate did not write the predicted bytes through
    dropped: bool = False  # the page cache was dropped before the load

    @classmethod
    def populated(cls, doc: dict[str, Any], state_bytes_per_token: int) -> Restore:
        tokens = (doc.get("summary") or {}).get("total_input_tokens")
        return cls(int(tokens) if tokens else None, state_bytes_per_token)

    @property
    def predicted_bytes(self) -> int:
        return (self.prompt_tokens or 0) * self.state_bytes_per_token

    def reason(self, profile: G3Profile, window: EngineWindow) -> str | None:
        """Why the load is not a cold restore of the populated state (None: device, engine and hits agree)."""
        if not self.prompt_tokens or not self.state_bytes_per_token:
            return "prompt tokens or state bytes per token unknown: the restore is not proven cold by bytes"
        assert window.counts is not None
        cold = restore_reason(
            profile.cold,
            window.counts,
            predicted_bytes=self.predicted_bytes,
            prompt_tokens=self.prompt_tokens,
            hit_tokens=window.hit_tokens,
            caches_dropped=self.dropped,
        )
        return "; ".join(r for r in (self.wrote, cold) if r) or None


def summaries(trials: dict[str, list[LoadTrial]]) -> dict[str, ArmFigures]:
    """Arm summaries keyed ``<arm>@c<C>``."""
    levels = sorted({(a, t.concurrency) for a, ts in trials.items() for t in ts})
    return {
        level_key(a, c): summarize_level(a, [t for t in trials[a] if t.concurrency == c]) for a, c in levels
    }
