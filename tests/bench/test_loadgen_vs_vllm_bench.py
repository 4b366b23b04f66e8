"""kvgate's load generator against ``vllm bench serve`` on the same server and trace (G3 §7).

Target: TTFT p50 within 5 % of ``vllm bench serve``'s. One real vLLM server (the CPU
build, prefix caching off so no run can hit another's cache) on the tiny HF Llama;
one trace of 32 distinct ~1k-token prompts (the load generator's own prompts, written
as vLLM's ``custom`` JSONL dataset); both tools send all of it at concurrency 16
with 16 output tokens, ignore_eos, greedy. Runs alternate ABBA; the medians of the
runs' TTFT p50 are compared.

Run: ``make bench`` (needs ``make engine``: vLLM in .venv-vllm).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kvgate.engines import EngineService, Placement, load_profile
from kvgate.engines.profile import PROFILE_DIR
from kvgate.g3.measure import _tiny_hf
from kvgate.inventory.schema import Host
from kvgate.loadgen import LoadConfig, PromptSpec, metric, run
from kvgate.transport.local import LocalExecutor

REPO = Path(__file__).resolve().parents[2]
VLLM_PYTHON = REPO / ".venv-vllm" / "bin" / "python"
CONCURRENCY, REQUESTS, PROMPT_TOKENS, OUTPUT_TOKENS = 16, 32, 1024, 16
PAIRS = 8
TARGET = 0.05

pytestmark = [
    pytest.mark.timeout(1800),
    pytest.mark.skipif(not VLLM_PYTHON.exists(), reason="vLLM not installed: make engine"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base URL, model path) of a vLLM CPU server without prefix caching."""
    ex = LocalExecutor()
    model = _tiny_hf(ex, Host(transport="local"), str(VLLM_PYTHON))
    tmp = tmp_path_factory.mktemp("vllm")
    where = Placement(run_dir=str(tmp / "run"), model=model, cache_dir=str(tmp / "cache"), port=18190,
                      python=str(VLLM_PYTHON))  # fmt: skip
    with EngineService(ex, load_profile(PROFILE_DIR / "vllm-cpu-recompute.yaml"), where) as eng:
        yield eng.url(""), model


def trace() -> list[str]:
    return PromptSpec(salt="bench-vs-vllm", prompt_tokens=PROMPT_TOKENS).prompts(REQUESTS)


def kvgate_ttft_p50_ms(url: str, model: str) -> float:
    config = LoadConfig(urls=(url,), model=model, max_tokens=OUTPUT_TOKENS, max_concurrency=CONCURRENCY)
    summary = run(config, trace()).summary()
    assert summary["failed"] == 0, summary["error_counts"]
    return metric(summary, "p50_ttft_ms")


def vllm_ttft_p50_ms(url: str, model: str) -> float:
    with tempfile.TemporaryDirectory(prefix="kvgate-vllm-bench-") as tmp:
        data = Path(tmp) / "trace.jsonl"
        data.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in trace()))
        argv = [
            str(VLLM_PYTHON), str(Path(__file__).with_name("vllm_cli.py")), "bench", "serve",
            "--backend", "vllm", "--base-url", url, "--endpoint", "/v1/completions", "--model", model,
            "--dataset-name", "custom", "--dataset-path", str(data), "--skip-chat-template",
            "--custom-output-len", str(OUTPUT_TOKENS), "--num-prompts", str(REQUESTS),
            "--max-concurrency", str(CONCURRENCY), "--request-rate", "inf", "--ignore-eos",
            "--temperature", "0", "--metric-percentiles", "50", "--percentile-metrics", "ttft",
            "--save-result", "--result-dir", tmp, "--result-filename", "r.json",
        ]  # fmt: skip
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        result = json.loads((Path(tmp) / "r.json").read_text())
    assert result["completed"] == REQUESTS, result
    return float(result["p50_ttft_ms"])


def test_loadgen_ttft_p50_within_5_percent_of_vllm_bench_serve(
    benchmark: Any, server: tuple[str, str]
) -> None:
    url, model = server
    kvgate_ttft_p50_ms(url, model)  # warm-up: the engine's first batches compile kernels
    runs: dict[str, list[float]] = {"kvgate": [], "vllm": []}

    def campaign() -> None:
        for i in range(PAIRS):
            order = ("kvgate", "vllm") if i % 2 == 0 else ("vllm", "kvgate")
            for tool in order:
                f = kvgate_ttft_p50_ms if tool == "kvgate" else vllm_ttft_p50_ms
                runs[tool].append(f(url, model))

    benchmark.pedantic(campaign, rounds=1, iterations=1)
    ours, theirs = statistics.median(runs["kvgate"]), statistics.median(runs["vllm"])
    deviation = ours / theirs - 1
    benchmark.extra_info.update({"runs_ttft_p50_ms": runs, "deviation": deviation})
    print(
        f"\nTTFT p50 at conc {CONCURRENCY}, {REQUESTS} × ~{PROMPT_TOKENS}-token prompts: kvgate loadgen "
        f"{ours:.1f} ms vs vllm bench serve {theirs:.1f} ms ({deviation:+.1%}; target ±{TARGET:.0%})\n"
        f"  runs (ms): { ({tool: [round(v, 1) for v in vs] for tool, vs in runs.items()}) }"
    )
    assert abs(deviation) <= TARGET
