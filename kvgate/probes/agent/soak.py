"""The G4 soak on the engine host: windows of mixed load, a correctness canary, samples; for hours.

The controller starts the engines and this workload, then only polls (teuthology
#2252, scylla-cluster-tests PR #7834): an SSH drop or a controller restart neither
stops the soak nor loses a window. Each window, until ``duration_s`` is over and at least
``min_windows`` ran (the judge's warm-up and baselines: on a busy host windows overrun, and a
soak too short to judge its trends would be wasted):

1. **load** for ``window_s``: batches of ``concurrency`` streamed requests; each is,
   with probability ``reuse``, a turn on one of ``documents`` shared documents (its
   first ``prefix_share`` of tokens is the document: the tier serves it) or else a
   fresh prompt (recomputed, and written to the tier). Every prompt is unique to the
   run's salt, so nothing from an earlier run can hit.
2. **canary**: the same ``canary_prompts`` prompts every window, greedy, with top-k
   logprobs: the first window computes them, every later one is served from cache,
   so its outputs must stay those of the first (the judge compares them).
3. **sample**: the engines' memory, tier bytes, device bytes, hit counter (soak_sample), with
   the CPU seconds the sample took (``sample_cpu_s``: the sampler's own cost, ≤ 1 % of a core).

A ``window`` event carries all of it; an engine that died ends the soak early
(the judge fails it). At the end, however it ends, the engines' process groups
are stopped when the spec says so, so an unattended soak leaves nothing behind.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from dataclasses import asdict
from typing import Any

from kvgate.probes.agent.events import EventLog
from kvgate.probes.agent.soak_sample import group_pids, sample
from kvgate.probes.agent.spec import Spec, SpecError
from kvgate.probes.loadgen import FIXED_OUTPUT, LoadConfig, PromptSpec, RequestRecord, median, summarize
from kvgate.probes.loadgen import run as run_load

KEYS = (
    "urls",
    "model",
    "duration_s",
    "window_s",
    "min_windows",
    "concurrency",
    "prompt_tokens",
    "max_tokens",
    "tokens_per_word",
    "reuse",
    "documents",
    "prefix_share",
    "fixed_output",
    "output_tokens_from",
    "request_timeout_s",
    "canary_prompts",
    "canary_max_tokens",
    "logprobs",
    "salt",
    "engines",
    "volume",
    "stop_engines_at_end",
)
SUMMARY_KEYS = (
    "completed",
    "failed",
    "error_counts",
    "duration_s",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput_per_s",
    "output_throughput_tok_per_s",
    "p50_ttft_ms",
    "p90_ttft_ms",
    "p99_ttft_ms",
    "p50_tpot_ms",
    "p99_tpot_ms",
    "p99_itl_ms",
    "p99_e2el_ms",
)
GROUP = 1 << 40  # prompt index stride per document: index // GROUP is the document
STOP_WAIT_S = 15.0


class SoakSpec:
    """The soak's spec, validated (every key named in its error)."""

    def __init__(self, data: Any) -> None:
        s = Spec(data, "soak", KEYS)
        self.urls = _strings(s, "urls")
        self.model = _strings(s, "model", single=True)[0]
        self.duration_s = s.integer("duration_s")
        self.window_s = s.integer("window_s")
        self.min_windows = s.integer("min_windows", 0, minimum=0)
        self.concurrency = s.integer("concurrency")
        self.prompt_tokens = s.integer("prompt_tokens")
        self.max_tokens = s.integer("max_tokens")
        self.tokens_per_word = _number(s, "tokens_per_word", 1.0, 0.01, 100.0)
        self.reuse = _number(s, "reuse", 0.5, 0.0, 1.0)
        self.documents = s.integer("documents", 4)
        self.prefix_share = _number(s, "prefix_share", 0.75, 0.0, 1.0)
        self.fixed_output = s.data.get("fixed_output", "ignore_eos")
        if self.fixed_output is not None:
            self.fixed_output = s.choice("fixed_output", FIXED_OUTPUT, "ignore_eos")
        self.output_tokens_from = s.choice("output_tokens_from", ("usage", "chunks"), "usage")
        self.request_timeout_s = _number(s, "request_timeout_s", 600.0, 1.0, 86400.0)
        self.canary_prompts = s.integer("canary_prompts", 2, minimum=0)
        self.canary_max_tokens = s.integer("canary_max_tokens", 8)
        self.logprobs = s.data.get("logprobs")
        if self.logprobs is not None:
            self.logprobs = s.integer("logprobs", minimum=0)
        self.salt = _strings(s, "salt", single=True)[0]
        self.engines = _engines(s)
        self.volume = s.data.get("volume")  # kvgate.probes.evidence Resolved, as JSON
        self.stop_engines_at_end = s.boolean("stop_engines_at_end", True)

    def load_config(self, *, canary: bool) -> LoadConfig:
        return LoadConfig(
            urls=tuple(self.urls),
            model=self.model,
            max_tokens=self.canary_max_tokens if canary else self.max_tokens,
            max_concurrency=1 if canary else self.concurrency,
            fixed_output=self.fixed_output,
            temperature=0.0,
            request_timeout_s=self.request_timeout_s,
            logprobs=self.logprobs if canary else None,
        )

    def prompt(self, rng: random.Random, serial: int) -> tuple[bool, str]:
        """(reuses a document, the prompt) for the run's request number ``serial``."""
        tokens, tpw = self.prompt_tokens, self.tokens_per_word
        if rng.random() < self.reuse:
            docs = PromptSpec(f"{self.salt}/docs", tokens, self.prefix_share, GROUP, tpw)
            return True, docs.prompt(rng.randrange(self.documents) * GROUP + serial)
        return False, PromptSpec(f"{self.salt}/fresh", tokens, tokens_per_word=tpw).prompt(serial)

    def canaries(self) -> list[str]:
        spec = PromptSpec(f"{self.salt}/canary", self.prompt_tokens, tokens_per_word=self.tokens_per_word)
        return spec.prompts(self.canary_prompts)


def _number(s: Spec, key: str, default: float, low: float, high: float) -> float:
    value = s.data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise s.fail(key, f"a number within [{low}, {high}]")
    return float(value)


def _strings(s: Spec, key: str, single: bool = False) -> list[str]:
    value = s.data.get(key)
    value = [value] if single else value
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise s.fail(key, "a non-empty string" if single else "a non-empty list of strings")
    return list(value)


def _engines(s: Spec) -> list[dict[str, Any]]:
    engines = s.data.get("engines")
    if not isinstance(engines, list) or not engines:
        raise s.fail("engines", "a non-empty list of {pgid, cache_dir, metrics_url, hit_counter}")
    for e in engines:
        if not isinstance(e, dict) or isinstance(e.get("pgid"), bool) or not isinstance(e.get("pgid"), int):
            raise s.fail("engines", "objects with an integer pgid (the engine's process group)")
    return [dict(e) for e in engines]


def run(data: Any, log: EventLog, stop: threading.Event) -> dict[str, Any]:
    """Windows until the duration is over, the engines die or the run is cancelled."""
    spec = SoakSpec(data)
    start, index, ended = time.monotonic(), 0, "duration"
    try:
        before = timed_sample(spec)
        while not stop.is_set() and (time.monotonic() - start < spec.duration_s or index < spec.min_windows):
            window, before = run_window(spec, index, before)
            log.emit("window", **window)
            index += 1
            if window["engines_alive"] < len(spec.engines):
                ended = "engine-died"
                log.emit("note", message=f"{len(spec.engines) - window['engines_alive']} engine(s) died")
                break
    finally:
        stopped = stop_engines(spec.engines) if spec.stop_engines_at_end else None
    return {"windows": index, "soak_s": time.monotonic() - start, "ended": ended, "engines_left": stopped}


def timed_sample(spec: SoakSpec) -> dict[str, Any]:
    """A sample with the CPU seconds this thread spent taking it (the sampler's own cost)."""
    cpu0 = time.thread_time()
    out = sample(spec.engines, spec.volume)
    out["sample_cpu_s"] = time.thread_time() - cpu0
    return out


def run_window(spec: SoakSpec, index: int, before: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One window: load, canary, sample; returns its record and the sample it ended with."""
    rng = random.Random(f"{spec.salt}/window/{index}")
    start_unix, start = time.time(), time.monotonic()
    records: list[RequestRecord] = []
    reused: list[bool] = []
    while time.monotonic() - start < spec.window_s:
        serial = index * 1_000_000 + len(records)
        batch = [spec.prompt(rng, serial + k) for k in range(spec.concurrency)]
        result = run_load(spec.load_config(canary=False), [p for _, p in batch])
        offset_ns = int((result.started_unix_s - start_unix) * 1e9)
        for r in result.records:
            r.shift(-offset_ns)  # on the window's clock, so batches pool like one load
        records += result.records
        reused += [r for r, _ in batch]
        if any(not r.success for r in result.records) and not all(
            group_pids(e["pgid"]) for e in spec.engines
        ):
            break  # an engine died: the sample below says so, and the soak ends
    load_s = time.monotonic() - start
    canary = run_load(spec.load_config(canary=True), spec.canaries()) if spec.canary_prompts else None
    after = timed_sample(spec)
    window = {
        "index": index,
        "start_unix_s": start_unix,
        "end_unix_s": time.time(),
        "load_s": load_s,
        "requests": len(records),
        "reuse_requests": sum(reused),
        **load_numbers(records, reused, load_s, spec.output_tokens_from),
        "canary": [canary_record(r) for r in canary.records] if canary else [],
        **sample_numbers(before, after),
    }
    return window, after


def load_numbers(
    records: list[RequestRecord], reused: list[bool], load_s: float, source: str
) -> dict[str, Any]:
    """The window's serving metrics (vllm bench serve keys), empty and short responses, TTFT by kind."""
    full = summarize(records, duration_s=load_s, percentiles=[50, 90, 99], output_tokens_from=source)
    ok = [r for r in records if r.success]
    by_kind = {True: [], False: []}  # type: dict[bool, list[float]]
    for i, r in enumerate(records):
        if r.success and r.chunk_ns:
            by_kind[reused[i]].append(r.ttft_ms)
    return {
        "summary": {k: full.get(k) for k in SUMMARY_KEYS},
        # no token at all: a response's text may be empty while it has tokens (a byte-level token that
        # is not yet a whole UTF-8 character decodes to nothing), which is the model's, not a fault
        "empty_responses": sum(1 for r in ok if r.output_tokens(source) == 0),
        "short_responses": sum(1 for r in ok if r.finish_reason not in (None, "length")),
        "reuse_ttft_p50_ms": median(by_kind[True]) if by_kind[True] else None,
        "fresh_ttft_p50_ms": median(by_kind[False]) if by_kind[False] else None,
    }


def hit_ratio(w: dict[str, Any]) -> float | None:
    """Tokens the engines served from cache over a window's prompt tokens (load and canary); for an
    engine that streams no usage, over the prompt tokens its log counted (kvgate.probes.agent.engine_log)."""
    prompt = w["summary"]["total_input_tokens"]
    if prompt:
        prompt += sum(c["prompt_tokens"] or 0 for c in w["canary"])
    else:
        prompt = w.get("logged_prompt_tokens")
    if w["hit_tokens"] is None or not prompt:
        return None
    return float(w["hit_tokens"]) / float(prompt)


def canary_record(r: RequestRecord) -> dict[str, Any]:
    return {
        "index": r.index,
        "success": r.success,
        "error": r.error,
        "text": r.text,
        "finish_reason": r.finish_reason,
        "prompt_tokens": r.prompt_tokens,
        "logprobs": [asdict(t) for t in r.logprobs],
    }


def sample_numbers(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The sample after the window, with the device's, the engines' read and the hit counter's deltas."""
    dev_a, dev_b = after.get("device"), before.get("device")
    return {
        "rss_kib": after["rss_kib"],
        "rss_anon_kib": after["rss_anon_kib"],
        "processes": after["processes"],
        "engines_alive": after["engines_alive"],
        "cache_dir_bytes": after["cache_dir_bytes"],
        "device_read_bytes": dev_a["read_bytes"] - dev_b["read_bytes"] if dev_a and dev_b else None,
        "device_write_bytes": dev_a["write_bytes"] - dev_b["write_bytes"] if dev_a and dev_b else None,
        "engine_read_bytes": _grown(before.get("engine_read_bytes"), after.get("engine_read_bytes")),
        "hit_tokens": _grown(before["hit_counter"], after["hit_counter"]),
        "logged_prompt_tokens": _grown(before.get("logged_prompt_tokens"), after.get("logged_prompt_tokens")),
        "metrics_errors": after["metrics_errors"],
        "sample_cpu_s": after["sample_cpu_s"],  # the sampler's CPU for this window's sample
    }


def _grown(before: float | None, after: float | None) -> float | None:
    """A counter's growth over a window; None when unknown or when it went back (an engine restarted)."""
    return after - before if before is not None and after is not None and after >= before else None


def stop_engines(engines: list[dict[str, Any]]) -> list[int]:
    """SIGTERM every engine's process group, SIGKILL what is left after STOP_WAIT_S; the pids left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not any(group_pids(e["pgid"]) for e in engines):
            break
        for eng in engines:
            try:
                os.killpg(eng["pgid"], sig)
            except (ProcessLookupError, PermissionError):
                continue
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline and any(group_pids(e["pgid"]) for e in engines):
            time.sleep(0.2)
    return [p for e in engines for p in group_pids(e["pgid"])]


__all__ = ["SoakSpec", "SpecError", "hit_ratio", "run"]
