"""Load-generator cost at concurrency 16 against a null streaming server in its own process (G3 §7).

Targets (issue 4, §7): client overhead ≤ 1 ms per request, and client CPU under
10 % of one core at concurrency 16. Overhead is the client process's CPU time
(user + system, ``time.process_time``) per request against a zero-delay server,
so the server's own work is not counted; the CPU share is that CPU time over
the wall time of a run against a server that paces tokens like an engine.

Run: ``.venv/bin/pytest tests/bench --benchmark-only``.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from nullserver import SERVE

from kvgate.probes.loadgen import LoadConfig, PromptSpec, run
from kvgate.probes.loadgen.metrics import metric

CONCURRENCY = 16
OVERHEAD_TARGET_MS = 1.0
CPU_TARGET_FRACTION = 0.10


@pytest.fixture
def null_server() -> Iterator[Callable[..., str]]:
    """``null_server(first_token_delay_ms=..., token_delay_ms=...)`` → base URL of a server process."""
    procs: list[subprocess.Popen[str]] = []

    def start(first_token_delay_ms: float = 0.0, token_delay_ms: float = 0.0) -> str:
        argv = list(SERVE)
        argv += ["--first-token-delay-ms", str(first_token_delay_ms), "--token-delay-ms", str(token_delay_ms)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout is not None
        return proc.stdout.readline().split()[1]

    yield start
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def measured_run(config: LoadConfig, prompts: list[str], samples: list[dict[str, Any]]) -> None:
    """One run; appends its client CPU and wall seconds and its summary to ``samples``."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = run(config, prompts)
    cpu_s, wall_s = time.process_time() - cpu0, time.perf_counter() - wall0
    samples.append({"cpu_s": cpu_s, "wall_s": wall_s, "summary": result.summary()})


def test_client_overhead_per_request(benchmark: Any, null_server: Callable[..., str]) -> None:
    url = null_server()
    n = 256
    config = LoadConfig(urls=(url,), model="null", max_tokens=32, max_concurrency=CONCURRENCY)
    prompts = PromptSpec(salt="bench-overhead", prompt_tokens=2000).prompts(n)
    run(config, prompts[:CONCURRENCY])  # warm-up: connections, imports
    samples: list[dict[str, Any]] = []
    benchmark.pedantic(measured_run, args=(config, prompts, samples), rounds=5, iterations=1)
    assert all(s["summary"]["failed"] == 0 for s in samples)
    cpu_ms = statistics.median(1000 * s["cpu_s"] / n for s in samples)
    wall_ms = statistics.median(1000 * s["wall_s"] / n for s in samples)
    benchmark.extra_info.update({"client_cpu_ms_per_request": cpu_ms, "wall_ms_per_request": wall_ms})
    print(
        f"\nloadgen overhead at conc {CONCURRENCY}, 2000-token prompts, 32 tokens: "
        f"client CPU {cpu_ms:.3f} ms/request (target ≤ {OVERHEAD_TARGET_MS} ms); "
        f"wall {wall_ms:.3f} ms/request incl. the null server"
    )
    assert cpu_ms <= OVERHEAD_TARGET_MS


def test_client_cpu_share_at_concurrency_16(benchmark: Any, null_server: Callable[..., str]) -> None:
    first_token_ms, token_ms = 50.0, 20.0  # ~50 tokens/s per stream, as a GPU engine decodes
    url = null_server(first_token_delay_ms=first_token_ms, token_delay_ms=token_ms)
    n = 2 * CONCURRENCY
    config = LoadConfig(urls=(url,), model="null", max_tokens=32, max_concurrency=CONCURRENCY)
    prompts = PromptSpec(salt="bench-cpu", prompt_tokens=2000).prompts(n)
    run(config, prompts[:CONCURRENCY])
    samples: list[dict[str, Any]] = []
    benchmark.pedantic(measured_run, args=(config, prompts, samples), rounds=3, iterations=1)
    assert all(s["summary"]["failed"] == 0 for s in samples)
    share = statistics.median(s["cpu_s"] / s["wall_s"] for s in samples)
    ttft_excess_ms = statistics.median(metric(s["summary"], "p50_ttft_ms") - first_token_ms for s in samples)
    itl_excess_ms = statistics.median(metric(s["summary"], "median_itl_ms") - token_ms for s in samples)
    benchmark.extra_info.update({"client_cpu_fraction_of_core": share, "p50_ttft_excess_ms": ttft_excess_ms})
    print(
        f"\nloadgen CPU at conc {CONCURRENCY} ({1000 / token_ms:.0f} tok/s per stream): "
        f"{share:.1%} of one core (target < {CPU_TARGET_FRACTION:.0%}); p50 TTFT − server delay "
        f"{ttft_excess_ms:.2f} ms, median ITL − token delay {itl_excess_ms:.2f} ms"
    )
    assert share < CPU_TARGET_FRACTION
