"""Load generator: an OpenAI-compatible streaming client with ``vllm bench serve``'s serving metrics.

Standard library only, Python 3.8+: kvgate's agent ships this package to the
engine host and runs it there (``python3 -m kvgate.probes.loadgen ...``), so the lab
network does not distort TTFT. Nothing here imports the rest of kvgate.

>>> from kvgate.probes.loadgen import LoadConfig, PromptSpec
>>> spec = PromptSpec(salt="run-42/ssd-restore/1", prompt_tokens=2000, reuse=0.5, group_size=4)
>>> config = LoadConfig(urls=("http://127.0.0.1:8000",), model="m", max_tokens=32, max_concurrency=16)
>>> # result = run(config, spec.prompts(64)); summary = result.summary()
>>> # metric(summary, "p50_ttft_ms"); invalid_reason(result.records, prompt_tokens=2000, max_tokens=32)

    run.py         drive endpoints with prompts as ``vllm bench serve`` does: arrivals, concurrency cap,
                   request i to endpoint i mod n, records pooled
    client.py      a stdlib HTTP/1.1 client streaming ``/v1/completions`` over keep-alive connections
    stream.py      synchronous decoders for a streamed body (chunked, Content-Length) and its SSE events
    record.py      what is recorded of one request (chunk times, usage, logprobs) and its TTFT, ITL, E2EL
    metrics.py     serving metrics exactly as ``vllm bench serve`` defines them; no samples raises
    shape.py       did the workload have its shape (prompts not truncated, completions not cut short)
    starvation.py  was the client starved: its event loop's lag, token stamps read in bunches
    outputs.py     two greedy outputs the same up to a near-tie (vLLM's ``check_logprobs_close``)
    prompts.py     deterministic long prompts with a controlled shared prefix, unique to a salt
    cli.py         what the two command lines share (this one and the agent's ``sessions``)
    __main__.py    ``python -m kvgate.probes.loadgen``: one load on the engine host → a result JSON
"""

from __future__ import annotations

from kvgate.probes.loadgen.cli import ratios, write_atomically
from kvgate.probes.loadgen.metrics import median
from kvgate.probes.loadgen.outputs import Comparison, Output, compare_outputs
from kvgate.probes.loadgen.prompts import WORDS
from kvgate.probes.loadgen.record import TokenLogprob
from kvgate.probes.loadgen.run import FIXED_OUTPUT

from .metrics import percentile, summarize
from .prompts import PromptSpec, fit_tokens_per_word
from .record import RequestRecord
from .run import LoadConfig, run
from .shape import invalid_reason
from .starvation import starved_reason

__all__ = [
    "FIXED_OUTPUT",
    "WORDS",
    "Comparison",
    "LoadConfig",
    "Output",
    "PromptSpec",
    "RequestRecord",
    "TokenLogprob",
    "compare_outputs",
    "fit_tokens_per_word",
    "invalid_reason",
    "median",
    "percentile",
    "ratios",
    "run",
    "starved_reason",
    "summarize",
    "write_atomically",
]
