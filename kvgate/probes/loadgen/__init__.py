"""Load generator: an OpenAI-compatible streaming client with ``vllm bench serve``'s serving metrics.

Standard library only, Python 3.8+: kvgate's agent ships this package to the
engine host and runs it there (``python3 -m kvgate.probes.loadgen ...``), so the lab
network does not distort TTFT. Nothing here imports the rest of kvgate.

>>> from kvgate.probes.loadgen import LoadConfig, PromptSpec
>>> spec = PromptSpec(salt="run-42/ssd-restore/1", prompt_tokens=2000, reuse=0.5, group_size=4)
>>> config = LoadConfig(urls=("http://127.0.0.1:8000",), model="m", max_tokens=32, max_concurrency=16)
>>> # result = run(config, spec.prompts(64)); summary = result.summary()
>>> # metric(summary, "p50_ttft_ms"); invalid_reason(result.records, prompt_tokens=2000, max_tokens=32)

Modules: :mod:`.client` (HTTP/1.1 + SSE), :mod:`.run` (schedule, concurrency,
endpoints), :mod:`.record` and :mod:`.metrics` (vLLM's definitions),
:mod:`.shape` (workload validity), :mod:`.prompts`, :mod:`.nullserver`,
:mod:`.cli` (what the two command lines share).
"""

from __future__ import annotations

from kvgate.probes.loadgen.cli import ratios, write_atomically
from kvgate.probes.loadgen.metrics import median
from kvgate.probes.loadgen.outputs import Output, compare_outputs
from kvgate.probes.loadgen.prompts import WORDS
from kvgate.probes.loadgen.record import TokenLogprob
from kvgate.probes.loadgen.run import FIXED_OUTPUT

from .metrics import NoSamples, distribution, metric, percentile, summarize
from .prompts import PromptSpec, fit_tokens_per_word
from .record import MissingUsage, RequestRecord
from .run import LoadConfig, LoadResult, arrival_offsets_s, run, run_async
from .shape import invalid_reason

__all__ = [
    "FIXED_OUTPUT",
    "WORDS",
    "LoadConfig",
    "LoadResult",
    "MissingUsage",
    "NoSamples",
    "Output",
    "PromptSpec",
    "RequestRecord",
    "TokenLogprob",
    "arrival_offsets_s",
    "compare_outputs",
    "distribution",
    "fit_tokens_per_word",
    "invalid_reason",
    "median",
    "metric",
    "percentile",
    "ratios",
    "run",
    "run_async",
    "summarize",
    "write_atomically",
]
