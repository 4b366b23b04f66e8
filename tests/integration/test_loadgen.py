"""The load generator against a real (null) streaming server on 127.0.0.1: timing, faults, endpoints, CLI."""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from nullserver import NullConfig, NullServer

from kvgate.probes.loadgen import LoadConfig, PromptSpec, invalid_reason, percentile, run
from kvgate.probes.loadgen.metrics import NoSamples, metric
from kvgate.probes.loadgen.run import LoadResult, run_async
from kvgate.probes.loadgen.starvation import starved_reason

REPO = Path(__file__).resolve().parents[2]
FIRST_TOKEN_S = 0.2
TOKEN_S = 0.005
SLACK_MS = 100.0  # a loaded 2-core CI machine: generous above, never below the server's own delay


@contextmanager
def serving(**config: object) -> Iterator[tuple[NullServer, str]]:
    server = NullServer(NullConfig(**config))  # type: ignore[arg-type]
    with server.in_thread() as url:
        yield server, url


def prompts(n: int, tokens: int = 200) -> list[str]:
    return PromptSpec(salt=f"it-{time.monotonic_ns()}", prompt_tokens=tokens).prompts(n)


@pytest.mark.parametrize("concurrency", [8, 16])
def test_streams_at_concurrency_with_the_servers_timing(concurrency: int) -> None:
    n, max_tokens = 2 * concurrency, 16
    with serving(first_token_delay_s=FIRST_TOKEN_S, token_delay_s=TOKEN_S) as (server, url):
        config = LoadConfig(urls=(url,), model="m", max_tokens=max_tokens, max_concurrency=concurrency)
        result = run(config, prompts(n))
    s = result.summary()
    assert (s["completed"], s["failed"]) == (n, 0)
    assert all(r.completion_tokens == max_tokens == len(r.chunk_ns) for r in result.records)
    assert s["total_output_tokens"] == n * max_tokens
    assert s["max_concurrent_requests"] == concurrency  # the semaphore, and nothing less, capped it
    assert server.connections_seen == concurrency  # keep-alive: one connection per slot, reused
    ttfts = [r.ttft_ms for r in result.records]
    assert min(ttfts) >= FIRST_TOKEN_S * 1000 - 1
    assert metric(s, "p50_ttft_ms") <= FIRST_TOKEN_S * 1000 + SLACK_MS
    assert TOKEN_S * 1000 - 1 <= metric(s, "median_itl_ms") <= TOKEN_S * 1000 + SLACK_MS
    assert TOKEN_S * 1000 - 1 <= metric(s, "median_tpot_ms") <= TOKEN_S * 1000 + SLACK_MS
    assert metric(s, "p90_client_queue_time_ms") >= FIRST_TOKEN_S * 1000  # the second wave waited
    assert invalid_reason(result.records, prompt_tokens=200, max_tokens=max_tokens) is None


def test_request_body_is_vllms_streaming_completion() -> None:
    with serving() as (server, url):
        run(LoadConfig(urls=(url,), model="tiny", max_tokens=4), prompts(1))
        assert server.last_request == {
            "model": "tiny",
            "max_tokens": 4,
            "temperature": 0.0,
            "stream": True,
            "stream_options": {"include_usage": True},
            "ignore_eos": True,
        }
        run(LoadConfig(urls=(url,), model="tiny", max_tokens=4, fixed_output="min_tokens"), prompts(1))
        assert server.last_request["min_tokens"] == 4  # llama-cpp-python's way to not stop early
        assert "ignore_eos" not in server.last_request
        run(LoadConfig(urls=(url,), model="tiny", max_tokens=4, fixed_output=None), prompts(1))
        assert not {"ignore_eos", "min_tokens"} & set(server.last_request)


def test_http_500_is_a_failed_request_with_the_servers_message() -> None:
    with serving(fail_status=500) as (_, url):
        result = run(LoadConfig(urls=(url,), model="m", max_tokens=4, max_concurrency=4), prompts(6))
    s = result.summary()
    assert (s["completed"], s["failed"]) == (0, 6)
    [(error, count)] = s["error_counts"].items()
    assert count == 6
    assert error.startswith("HTTP 500: ")
    assert "injected failure" in error
    with pytest.raises(NoSamples):
        metric(s, "p50_ttft_ms")


def test_connection_dropped_mid_stream_is_a_failed_request() -> None:
    with serving(close_after_chunks=3) as (_, url):
        result = run(LoadConfig(urls=(url,), model="m", max_tokens=16, max_concurrency=2), prompts(4))
    assert not any(r.success for r in result.records)
    for r in result.records:
        assert len(r.chunk_ns) == 3
        assert "closed before the last chunk" in r.error
        assert "after 3 token chunks" in r.error
    assert result.summary()["failed"] == 4


def test_a_request_over_its_timeout_fails_without_hanging() -> None:
    with serving(first_token_delay_s=30.0) as (_, url):
        config = LoadConfig(urls=(url,), model="m", max_tokens=4, max_concurrency=4, request_timeout_s=0.3)
        started = time.monotonic()
        result = run(config, prompts(4))
        elapsed_s = time.monotonic() - started
    assert elapsed_s < 5
    assert all(not r.success and r.error.startswith("timeout") for r in result.records)


def test_a_keep_alive_connection_closed_by_the_server_is_reopened() -> None:
    with serving(keep_alive=False) as (server, url):
        result = run(LoadConfig(urls=(url,), model="m", max_tokens=4, max_concurrency=2), prompts(6))
    assert all(r.success for r in result.records)
    assert server.connections_seen == 6


def test_unreachable_endpoint_is_a_failed_request() -> None:
    with serving() as (_, url):
        pass  # the port is free again
    result = run(LoadConfig(urls=(url,), model="m", max_tokens=4, connect_timeout_s=1.0), prompts(2))
    assert all(not r.success and "ConnectionRefusedError" in r.error for r in result.records)


def test_early_stop_makes_the_workload_invalid() -> None:
    with serving(stop_after_tokens=5) as (_, url):
        result = run(LoadConfig(urls=(url,), model="m", max_tokens=16, max_concurrency=4), prompts(4))
    assert result.summary()["completed"] == 4
    reason = invalid_reason(result.records, prompt_tokens=200, max_tokens=16)
    assert reason is not None
    assert "ended early: 4/4" in reason
    assert {r.finish_reason for r in result.records} == {"stop"}


def test_several_endpoints_round_robin_with_pooled_percentiles() -> None:
    with ExitStack() as stack:
        (a, url_a), (b, url_b) = (stack.enter_context(serving(token_delay_s=0.002)) for _ in range(2))
        config = LoadConfig(urls=(url_a, url_b), model="m", max_tokens=8, max_concurrency=8)
        result = run(config, prompts(16))
    assert a.requests_seen == b.requests_seen == 8
    assert [r.endpoint for r in result.records[:4]] == [url_a, url_b, url_a, url_b]
    doc = result.to_dict()
    assert doc["summary"]["completed"] == 16
    assert doc["per_endpoint"][url_a]["completed"] == doc["per_endpoint"][url_b]["completed"] == 8
    union = [r.ttft_ms for r in result.records]
    assert doc["summary"]["p90_ttft_ms"] == percentile(union, 90)  # over the union, not averaged


def test_request_rate_spreads_arrivals_like_vllm() -> None:
    with serving() as (_, url):
        config = LoadConfig(urls=(url,), model="m", max_tokens=2, request_rate=40.0, seed=3)
        result = run(config, prompts(12))
    arrivals_s = [r.arrival_ns / 1e9 for r in result.records]
    assert arrivals_s == sorted(arrivals_s)
    assert arrivals_s[-1] == pytest.approx(12 / 40.0, abs=0.05)
    assert result.duration_s >= 12 / 40.0


def run_cli(python: str, url: str, out: Path) -> dict[str, Any]:
    argv = [python, "-m", "kvgate.probes.loadgen", "--url", url, "--concurrency", "4", "--requests", "8"]
    argv += ["--prompt-tokens", "300", "--max-tokens", "8", "--salt", "cli-test", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(argv, check=True, timeout=60, env=env, capture_output=True)
    document: dict[str, Any] = json.loads(
        out.read_text(), parse_constant=lambda c: pytest.fail(f"not JSON: {c}")
    )
    return document


def test_cli_writes_a_strict_json_artifact(tmp_path: Path) -> None:
    with serving(first_token_delay_s=0.01) as (server, url):
        doc = run_cli(sys.executable, url, tmp_path / "result.json")
    summary = doc["summary"]
    assert isinstance(summary, dict)
    assert summary["completed"] == 8
    assert summary["failed"] == 0
    assert doc["config"]["model"] == "null-model"  # asked /v1/models, as vLLM does
    assert doc["config"]["request_rate"] == "inf"
    assert doc["prompt_spec"]["salt"] == "cli-test"
    assert doc["workload_invalid_reason"] is None
    assert len(doc["records"]) == 8
    assert server.requests_seen == 8


def python38() -> str | None:
    """A working Python 3.8 (the oldest an engine host may have), if this machine has one."""
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8")))
    candidates += [shutil.which("python3.8") or ""]
    check = "import sys; sys.exit(sys.version_info[:2] != (3, 8))"
    for python in filter(None, candidates):
        if subprocess.run([python, "-c", check], capture_output=True, check=False).returncode == 0:
            return python
    return None


@pytest.fixture(scope="module")
def python38_path() -> str:
    found = python38()
    if found is None:
        pytest.skip("no python3.8 on this machine")
    return found


def test_cli_runs_on_python_38_like_an_old_engine_host(tmp_path: Path, python38_path: str) -> None:
    with serving() as (_, url):
        doc = run_cli(python38_path, url, tmp_path / "result.json")
    assert doc["summary"]["completed"] == 8


def test_a_starved_client_says_so_with_its_loop_lag_and_bunched_tokens() -> None:
    """The client's loop blocked for a second while the server streamed: the tokens written meanwhile
    are read in one go, stamped microseconds apart; the load's record shows it and the bound fires."""
    blocked_s, max_tokens = 1.0, 50

    async def load_with_a_blocked_loop(server: NullServer, url: str) -> LoadResult:
        async def block_once_the_request_is_in() -> None:
            while server.requests_seen == 0:
                await asyncio.sleep(0.001)
            time.sleep(blocked_s)  # what a busy host does to a client: the loop cannot run

        config = LoadConfig(urls=(url,), model="m", max_tokens=max_tokens)
        result, _ = await asyncio.gather(run_async(config, prompts(1)), block_once_the_request_is_in())
        return result

    with serving(token_delay_s=0.005) as (server, url):
        result = asyncio.run(load_with_a_blocked_loop(server, url))
    health = result.to_dict()["client_health"]
    assert health["loop_lag_ms"]["max"] >= blocked_s * 1000 * 0.9, health
    assert health["bunched_token_share"] >= 0.3, health  # ≥ 15 of 49 gaps < 0.1 ms: read, not generated
    reason = starved_reason(health, max_lag_p99_ms=None, max_bunched_share=0.2)
    assert "read together rather than generated apart" in (reason or "")
    assert starved_reason(health, max_lag_p99_ms=None, max_bunched_share=None) is None  # no bound: recorded
