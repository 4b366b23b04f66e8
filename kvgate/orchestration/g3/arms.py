"""What one G3 trial measured, and an arm's trials summarised (medians, percentiles, CV).

A trial is one prompt with its own salt, sent once to one arm: recompute (no
external tier), ssd-restore (populated, made cold, restored) or warm (a second
hit without restart). Latency percentiles are computed the way ``vllm bench
serve`` computes them (numpy's linear interpolation), over every trial's request;
the arm's headline numbers are medians across trials with their CV.

>>> out = [Outcome(ttft_s=v, e2e_s=v + 1, text="x") for v in (2, 3, 4)]
>>> t = [Trial("recompute", i, f"s{i}", o) for i, o in enumerate(out)]
>>> s = summarize("recompute", t)
>>> s.ttft_p50_s, round(s.ttft_cv, 3)
(3.0, 0.272)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from kvgate.probes.loadgen import TokenLogprob, median, percentile
from kvgate.record import ArmFigures


@dataclass(frozen=True)
class Outcome:
    """One streamed request as the client saw it (times in seconds, measured on the engine host)."""

    ttft_s: float | None
    e2e_s: float | None
    text: str
    finish_reason: str | None = "length"
    output_chunks: int = 0
    error: str = ""
    logprobs: tuple[TokenLogprob, ...] = ()  # per generated token, when the request asked for them

    @property
    def ok(self) -> bool:
        return not self.error and self.ttft_s is not None


@dataclass(frozen=True)
class Window:
    """Counters bracketing exactly one measured request: device, engine process, engine hits."""

    device: str | None  # what counted the candidate volume's reads (its devices, or NFS server reads)
    device_read_bytes: int | None
    engine_read_bytes: int | None  # the engine's process tree (or cgroup) read bytes delta
    hit_tokens: int | None  # tokens the engine restored from its tier (its own count), None: unknown
    caches_dropped: bool = False
    host_load: str | None = None  # the host's load in the window (load average, CPU steal)
    engine_counted: str | None = None  # how the engine's bytes were counted (evidence.window.engine_how)


@dataclass(frozen=True)
class Trial:
    """One prompt in one arm, with its evidence."""

    arm: str
    index: int
    salt: str
    outcome: Outcome
    prompt_tokens: int | None = None  # counted by the engine's tokenizer
    window: Window | None = None
    predicted_bytes: int | None = None  # prompt tokens × state bytes per token
    cache_growth_bytes: int | None = None  # tier directory growth when this prompt was populated
    restart_to_ready_s: float | None = None
    invalid_reason: str | None = None  # cold proof, write-through or shape, with the numbers
    evidence: tuple[str, ...] = ()
    cold_by: str = ""  # how the tier was made cold before the restore (EngineService.make_cold)
    shared_device: str | None = None  # the device read far more than the engine: another reader's

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cv(values: list[float]) -> float | None:
    """Coefficient of variation (population std / mean); None for fewer than two values: one trial has
    no spread to show (a reader took '1/1 … CV 0 %' for a figure that did not vary)."""
    if len(values) < 2:
        return None
    mean = math.fsum(values) / len(values)
    if mean == 0:
        return 0.0
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values)) / mean


def _optional_median(values: list[float | int | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return median(present) if present else None


def _read_bw(t: Trial) -> float | None:
    """The engine's own read bytes over the restore's TTFT (the request waits for the restore), in GB/s."""
    w, ttft = t.window, t.outcome.ttft_s
    return w.engine_read_bytes / ttft / 1e9 if w and w.engine_read_bytes is not None and ttft else None


def _throughput(t: Trial, output_tokens: int) -> float | None:
    e2e = t.outcome.e2e_s
    return output_tokens / e2e if t.outcome.ok and e2e else None


def summarize(arm: str, trials: list[Trial], *, output_tokens: int = 0) -> ArmFigures:
    """Summarise an arm; statistics are over successful requests only (as vllm bench serve)."""
    ok = [t for t in trials if t.outcome.ok]
    ttft = [t.outcome.ttft_s for t in ok if t.outcome.ttft_s is not None]
    e2e = [t.outcome.e2e_s for t in ok if t.outcome.e2e_s is not None]
    win = [t.window for t in trials if t.window is not None]
    reasons = [f"trial {t.index}: {t.invalid_reason}" for t in trials if t.invalid_reason]
    failed = [f"trial {t.index}: request failed: {t.outcome.error}" for t in trials if not t.outcome.ok]
    return ArmFigures(
        arm=arm,
        trials=len(trials),
        completed=len(ok),
        ttft_p50_s=percentile(ttft, 50) if ttft else None,
        ttft_p90_s=percentile(ttft, 90) if ttft else None,
        ttft_p99_s=percentile(ttft, 99) if ttft else None,
        ttft_cv=cv(ttft),
        e2e_p50_s=percentile(e2e, 50) if e2e else None,
        output_throughput_tok_per_s=_optional_median([_throughput(t, output_tokens) for t in ok]),
        prompt_tokens_p50=_optional_median([t.prompt_tokens for t in trials]),
        device_read_bytes_p50=_optional_median([w.device_read_bytes for w in win]),
        engine_read_bytes_p50=_optional_median([w.engine_read_bytes for w in win]),
        hit_tokens_p50=_optional_median([w.hit_tokens for w in win]),
        cache_growth_bytes_p50=_optional_median([t.cache_growth_bytes for t in trials]),
        predicted_bytes_p50=_optional_median([t.predicted_bytes for t in trials]),
        restart_to_ready_p50_s=_optional_median([t.restart_to_ready_s for t in trials]),
        invalid_reasons=failed + reasons,
        qualifications=[f"trial {t.index}: {t.shared_device}" for t in trials if t.shared_device],
        read_bw_gb_per_s=_optional_median([_read_bw(t) for t in ok]),
    )
