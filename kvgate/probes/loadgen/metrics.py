"""Serving metrics exactly as ``vllm bench serve`` defines them, in the standard library.

Source: vllm-project/vllm ``vllm/benchmarks/serve.py`` @009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1,
``calculate_metrics`` and ``benchmark``:

- only successful requests enter the latency statistics; ``failed`` counts the rest;
- ``ttft``: first token chunk − send time; ``e2el``: last token chunk − send time;
- ``tpot = (e2el − ttft) / (output_tokens − 1)``, only for output_tokens > 1;
- ``itl``: every inter-chunk gap of every request, flattened into one list, so ITL
  percentiles are over chunks, not requests;
- ``output_tokens`` is ``usage.completion_tokens`` and input tokens are
  ``usage.prompt_tokens`` (vLLM overrides its dataset prompt length with usage);
- ``request_throughput = completed / duration``, ``output_throughput = Σ output
  tokens / duration``, ``total_token_throughput = (Σ input + Σ output) / duration``;
- per metric: ``np.mean``, ``np.median``, ``np.std`` (population, ddof=0) and
  ``np.percentile(x, p)`` (method "linear"), reported in ms under vLLM's keys
  (``mean_ttft_ms``, ``p99_itl_ms``, …); ``client_queue_time`` as in vLLM.

One deliberate difference: vLLM reports 0 for a metric without samples
(``np.mean(ttfts or 0)``); here the statistic is ``None`` in the summary and
:func:`metric` raises :class:`NoSamples` when a caller asks for it.

>>> percentile([1.0, 2.0, 3.0, 4.0], 90)
3.7
>>> distribution([10.0, 20.0], [50])["p50"]
15.0
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from .record import TOKEN_SOURCES, RequestRecord

DEFAULT_PERCENTILES = (50.0, 90.0, 99.0)
METRICS = ("ttft", "tpot", "itl", "e2el", "client_queue_time")


class NoSamples(ValueError):
    """A statistic was asked of an empty sample list: there is no number to report."""


def percentile(samples: Sequence[float], p: float) -> float:
    """``numpy.percentile(samples, p)`` with the default "linear" method (same arithmetic)."""
    if not samples:
        raise NoSamples(f"percentile p{p:g} of no samples")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} outside [0, 100]")
    xs = sorted(samples)
    virtual = (len(xs) - 1) * (p / 100)  # numpy's "linear" get_virtual_index
    if virtual >= len(xs) - 1:
        return xs[-1]
    below = math.floor(virtual)
    t = virtual - below
    a, b = xs[below], xs[below + 1]
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t  # numpy _lerp, both branches


def median(samples: Sequence[float]) -> float:
    """``numpy.median``: the middle value, or the mean of the two middle values."""
    if not samples:
        raise NoSamples("median of no samples")
    xs = sorted(samples)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def distribution(samples: Sequence[float], percentiles: Iterable[float]) -> dict[str, float]:
    """mean, median, std (population) and each ``p<P>`` of the samples."""
    if not samples:
        raise NoSamples("statistics of no samples")
    mean = math.fsum(samples) / len(samples)
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in samples) / len(samples))
    out = {"mean": mean, "median": median(samples), "std": std}
    for p in percentiles:
        out[percentile_key(p)] = percentile(samples, p)
    return out


def percentile_key(p: float) -> str:
    """vLLM's key word for a percentile: 99 → ``p99``, 99.9 → ``p99.9``."""
    return f"p{int(p)}" if int(p) == p else f"p{p}"


def summarize(
    records: Sequence[RequestRecord],
    *,
    duration_s: float,
    percentiles: Iterable[float] = DEFAULT_PERCENTILES,
    output_tokens_from: str = "usage",
) -> dict[str, Any]:
    """The run's metrics under vLLM's result keys, with units in every name."""
    if duration_s <= 0:
        raise ValueError(f"duration_s must be > 0, got {duration_s}")
    if output_tokens_from not in TOKEN_SOURCES:
        raise ValueError(f"output_tokens_from must be one of {TOKEN_SOURCES}")
    ok = [r for r in records if r.success]
    outputs = [r.output_tokens(output_tokens_from) for r in ok]
    inputs = [r.prompt_tokens for r in ok]
    total_in = sum(x for x in inputs if x is not None) if None not in inputs else None
    total_out = sum(outputs)
    summary: dict[str, Any] = {
        "completed": len(ok),
        "failed": len(records) - len(ok),
        "error_counts": dict(Counter(r.error for r in records if not r.success)),
        "duration_s": duration_s,
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput_per_s": len(ok) / duration_s,
        "output_throughput_tok_per_s": total_out / duration_s,
        "total_token_throughput_tok_per_s": None if total_in is None else (total_in + total_out) / duration_s,
        "max_concurrent_requests": peak_concurrency(ok),
        "output_tokens_from": output_tokens_from,
    }
    pcts = list(percentiles)
    for name, samples in _samples(ok, outputs).items():
        summary[f"samples_{name}"] = len(samples)
        stats = distribution(samples, pcts) if samples else dict.fromkeys(_stat_names(pcts))
        summary.update({f"{stat}_{name}_ms": value for stat, value in stats.items()})
    return summary


def metric(summary: dict[str, Any], key: str) -> float:
    """One number from a summary, e.g. ``metric(s, "p50_ttft_ms")``; raises when it has no samples."""
    if key not in summary:
        raise KeyError(f"{key!r} is not in this summary (percentiles computed: {sorted(summary)[:8]}…)")
    value = summary[key]
    if value is None:
        raise NoSamples(f"{key}: no successful request produced a sample for it")
    return float(value)


def peak_concurrency(records: Iterable[RequestRecord]) -> int:
    """Most requests in flight at once, over half-open [send, last chunk) intervals (as vLLM)."""
    events = sorted(
        [(r.send_ns, 1) for r in records if r.chunk_ns]
        + [(r.chunk_ns[-1], -1) for r in records if r.chunk_ns]
    )
    peak = current = 0
    for _, delta in events:
        current += delta
        peak = max(peak, current)
    return peak


def _samples(ok: Sequence[RequestRecord], outputs: Sequence[int]) -> dict[str, list[float]]:
    tpots = [r.tpot_ms(outputs[i]) for i, r in enumerate(ok)]
    return {
        "ttft": [r.ttft_ms for r in ok],
        "tpot": [t for t in tpots if t is not None],
        "itl": [gap for r in ok for gap in r.itl_ms],
        "e2el": [r.e2el_ms for r in ok],
        "client_queue_time": [r.client_queue_ms for r in ok],
    }


def _stat_names(percentiles: Iterable[float]) -> list[str]:
    return ["mean", "median", "std", *(percentile_key(p) for p in percentiles)]
