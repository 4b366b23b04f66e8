"""Drive one or more OpenAI-compatible endpoints with a list of prompts, the way ``vllm bench serve`` does.

Semantics copied from vllm-project/vllm ``vllm/benchmarks/serve.py`` @009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1
(``get_request``, ``benchmark``, ``limited_request_func``):

- arrival times: all at t=0 when ``request_rate`` is infinite; otherwise gamma
  intervals (shape ``burstiness``, scale ``1/(rate·burstiness)``; burstiness 1 is a
  Poisson process), accumulated, then rescaled so the last arrival is exactly at
  ``n / rate``. kvgate draws them from ``random.Random(seed)`` (stdlib), so the
  schedule is seeded and reproducible but not numerically vLLM's numpy stream;
- ``max_concurrency`` is a semaphore around each request: a request that arrives
  while every slot is busy queues in the client (its wait is ``client_queue_ms``);
- the duration runs from just before the first arrival to the end of the last
  request.

Several endpoints are driven together: request *i* goes to endpoint *i mod n*, the
semaphore caps the total in flight, and the records are pooled so percentiles are
computed over the union of samples (see :mod:`kvgate.probes.loadgen.metrics`).

>>> arrival_offsets_s(4, request_rate=float("inf"))
[0.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .client import Pool, stream_completion
from .metrics import summarize
from .record import MissingUsage, RequestRecord
from .starvation import LagMonitor, client_health

RESULT_KIND = "kvgate.loadgen.result/1"
# The request field that makes a server generate exactly max_tokens, as `vllm bench serve` asks for
# fixed output lengths: vLLM and SGLang honour `ignore_eos`; llama-cpp-python only `min_tokens`
# (an EOS-suppressing logits processor). Then a response with no token is always a server fault.
FIXED_OUTPUT = ("ignore_eos", "min_tokens")


@dataclass(frozen=True)
class LoadConfig:
    """What to send, where, how fast and how many at once (the CLI's flags, typed)."""

    urls: tuple[str, ...]
    model: str
    max_tokens: int
    max_concurrency: int | None = None  # None: no cap (vLLM's default)
    request_rate: float = math.inf
    burstiness: float = 1.0
    seed: int = 0
    # how the server is asked to generate exactly max_tokens (see FIXED_OUTPUT); None: it may stop early
    fixed_output: str | None = "ignore_eos"
    temperature: float = 0.0
    connect_timeout_s: float = 10.0
    request_timeout_s: float = 600.0
    path: str = "/v1/completions"
    logprobs: int | None = None  # top-k logprobs per generated token (OpenAI ``logprobs``); None: not asked
    extra_body: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.urls:
            raise ValueError("at least one endpoint URL is needed")
        if self.max_concurrency is not None and self.max_concurrency <= 0:
            raise ValueError("max_concurrency must be > 0")
        if self.request_rate <= 0 or self.burstiness <= 0 or self.max_tokens <= 0:
            raise ValueError("request_rate, burstiness and max_tokens must be > 0")
        if self.logprobs is not None and self.logprobs < 0:
            raise ValueError("logprobs (top-k) must be >= 0")
        if self.fixed_output is not None and self.fixed_output not in FIXED_OUTPUT:
            raise ValueError(f"fixed_output must be one of {FIXED_OUTPUT} or None")

    def body(self, prompt: str) -> bytes:
        """The JSON body of one streaming completion request."""
        payload: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.fixed_output == "ignore_eos":
            payload["ignore_eos"] = True
        elif self.fixed_output == "min_tokens":
            payload["min_tokens"] = self.max_tokens
        if self.logprobs is not None:
            payload["logprobs"] = self.logprobs
        payload.update(self.extra_body)
        return json.dumps(payload).encode("utf-8")


@dataclass
class LoadResult:
    """The records of one run, its duration, and what produced them."""

    config: LoadConfig
    records: list[RequestRecord]
    duration_s: float
    started_unix_s: float
    # this client's own CPU seconds over the run: on a host it shares with the engine, the share
    # of a core it took from the server (set beside the engine's own latency histograms)
    client_cpu_s: float | None = None
    # how late the client's event loop ran over the load (ns per tick): a starved client stamps late
    loop_lags_ns: list[int] = field(default_factory=list)

    def summary(self, **options: Any) -> dict[str, Any]:
        """Metrics over every endpoint's records together (``summarize`` options pass through)."""
        return summarize(self.records, duration_s=self.duration_s, **options)

    def to_dict(self, **options: Any) -> dict[str, Any]:
        """The artifact: config, records, pooled summary, one summary per endpoint when several.

        Without usage in the responses the summary is ``None`` and ``summary_error``
        says why; the records are kept either way.
        """
        document: dict[str, Any] = {
            "kind": RESULT_KIND,
            "config": _json_safe(asdict(self.config)),
            "started_unix_s": self.started_unix_s,
            "duration_s": self.duration_s,
            "client_cpu_s": self.client_cpu_s,
            "client_health": client_health(self.loop_lags_ns, self.records),
            "summary": None,
            "summary_error": None,
            "per_endpoint": {},
            "records": [r.to_dict() for r in self.records],
        }
        try:
            document["summary"] = self.summary(**options)
            if len(self.config.urls) > 1:
                document["per_endpoint"] = {
                    url: self._endpoint_summary(url, options) for url in self.config.urls
                }
        except MissingUsage as exc:
            document["summary_error"] = str(exc)
        return document

    def _endpoint_summary(self, url: str, options: dict[str, Any]) -> dict[str, Any]:
        records = [r for r in self.records if r.endpoint == url]
        return summarize(records, duration_s=self.duration_s, **options)


def arrival_offsets_s(n: int, *, request_rate: float, burstiness: float = 1.0, seed: int = 0) -> list[float]:
    """When each of ``n`` requests is due, in seconds after the start (vLLM ``get_request``)."""
    if math.isinf(request_rate):
        return [0.0] * n
    rng = random.Random(seed)
    theta = 1.0 / (request_rate * burstiness)
    offsets: list[float] = []
    total = 0.0
    for _ in range(n):  # infinite burstiness: constant 1/rate gaps
        total += 1.0 / request_rate if math.isinf(burstiness) else rng.gammavariate(burstiness, theta)
        offsets.append(total)
    scale = (n / request_rate) / total if total else 1.0
    return [t * scale for t in offsets]


def run(config: LoadConfig, prompts: Sequence[str]) -> LoadResult:
    """Send every prompt once and wait for all answers (a fresh event loop)."""
    return asyncio.run(run_async(config, prompts))


async def run_async(config: LoadConfig, prompts: Sequence[str]) -> LoadResult:
    """:func:`run` inside a running event loop."""
    pools = [Pool(url, path=config.path, connect_timeout_s=config.connect_timeout_s) for url in config.urls]
    records = [RequestRecord(index=i, endpoint=config.urls[i % len(pools)]) for i in range(len(prompts))]
    offsets = arrival_offsets_s(
        len(prompts), request_rate=config.request_rate, burstiness=config.burstiness, seed=config.seed
    )
    started_unix_s, cpu0, lag = time.time(), time.process_time(), LagMonitor()
    lag.start()
    try:
        start_ns = await _dispatch(config, pools, prompts, records, offsets)
        duration_ns, cpu_s = time.perf_counter_ns() - start_ns, time.process_time() - cpu0
    finally:
        await lag.stop()
        for pool in pools:
            await pool.close()
        await asyncio.sleep(0)  # let transports closed on error paths finish closing
    for record in records:
        record.shift(start_ns)
    return LoadResult(config, records, duration_ns / 1e9, started_unix_s, cpu_s, lag.lags_ns)


async def _dispatch(
    config: LoadConfig,
    pools: list[Pool],
    prompts: Sequence[str],
    records: list[RequestRecord],
    offsets: list[float],
) -> int:
    """Release each request at its arrival time; return the start timestamp (ns)."""
    slots = asyncio.Semaphore(config.max_concurrency) if config.max_concurrency else None
    start_ns = time.perf_counter_ns()
    tasks = []
    for i, prompt in enumerate(prompts):
        delay_s = (start_ns + offsets[i] * 1e9 - time.perf_counter_ns()) / 1e9
        if delay_s > 0:
            await asyncio.sleep(delay_s)
        records[i].arrival_ns = time.perf_counter_ns()
        body = functools.partial(config.body, prompt)  # encoded once the clock runs, as vLLM's payload
        request = _limited(slots, pools[i % len(pools)], body, records[i], config.request_timeout_s)
        tasks.append(asyncio.ensure_future(request))
    await asyncio.gather(*tasks)
    return start_ns


async def _limited(
    slots: asyncio.Semaphore | None,
    pool: Pool,
    body: Callable[[], bytes],
    record: RequestRecord,
    timeout_s: float,
) -> None:
    if slots is None:
        await stream_completion(pool, body, record, timeout_s=timeout_s)
        return
    async with slots:
        await stream_completion(pool, body, record, timeout_s=timeout_s)


def _json_safe(config: dict[str, Any]) -> dict[str, Any]:
    """Infinite rates as "inf" (strict JSON has no Infinity), as vllm bench serve stores them."""
    return {k: "inf" if isinstance(v, float) and math.isinf(v) else v for k, v in config.items()}
