"""kvgate's load generator and ``vllm bench serve`` on one vLLM server: runs, each seen by the server too.

Each run is one client process (``python -m kvgate.loadgen`` or ``vllm bench serve``)
sending one trace; around it the server's own histograms (/metrics: TTFT from
arrival, inter-token latency, per-request time per output token) are diffed, and
the client process's CPU time is taken from ``getrusage(RUSAGE_CHILDREN)``. So
every run says what the client measured, what the server measured over the same
requests, and how much CPU the client took from a machine it shares with the server.

>>> s = Shape("demo", requests=4, prompt_tokens=64, output_tokens=8, concurrency=2)
>>> len(s.prompts("x")), s.label
(4, '4 × 64-token prompts, 8 out, conc 2')
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvgate.engines.metrics import Snapshot, diff, parse
from kvgate.loadgen import PromptSpec

REPO = Path(__file__).resolve().parents[2]
VLLM_PYTHON = REPO / ".venv-vllm" / "bin" / "python"
CLIENT_KEYS = ("ttft", "tpot", "itl", "e2el")
# the server's own histograms (vLLM 0.32 v1/metrics/loggers.py), by the client metric they correspond to
SERVER_HISTOGRAMS = {
    "ttft": "vllm:time_to_first_token_seconds",  # API server: arrival → first token processed
    "itl": "vllm:inter_token_latency_seconds",  # engine core: between consecutive token outputs
    "tpot": "vllm:request_time_per_output_token_seconds",  # per request: decode time / (tokens − 1)
    "e2el": "vllm:e2e_request_latency_seconds",
}


@dataclass(frozen=True)
class Shape:
    """One trace: distinct prompts of one length, a fixed output length, a concurrency cap, all at t=0."""

    name: str
    requests: int
    prompt_tokens: int
    output_tokens: int
    concurrency: int

    @property
    def label(self) -> str:
        return (
            f"{self.requests} × {self.prompt_tokens}-token prompts, {self.output_tokens} out, "
            f"conc {self.concurrency}"
        )

    def prompts(self, salt: str) -> list[str]:
        return PromptSpec(salt=salt, prompt_tokens=self.prompt_tokens).prompts(self.requests)


@dataclass(frozen=True)
class ToolRun:
    """One run of one client: its p50/mean per metric (ms), the server's over the run, its CPU seconds."""

    tool: str
    position: int  # 0: this tool went first in its pair
    client_ms: dict[str, float]  # p50_ttft, mean_ttft, p50_tpot, … as the client computed them
    server_ms: dict[str, float]  # mean_ttft, p50_ttft (bucket estimate), … from the server's histograms
    client_cpu_s: float
    wall_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return self.__dict__.copy()


def scrape(url: str) -> Snapshot:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as response:
        return parse(response.read().decode())


def server_ms(before: Snapshot, after: Snapshot) -> dict[str, float]:
    """Mean (exact: sum / count) and bucket-estimated p50 of each server histogram over a run, in ms."""
    window, out = diff(before, after), {}
    for key, name in SERVER_HISTOGRAMS.items():
        h = window.histogram(name)
        if h.count > 0:
            out[f"mean_{key}"] = h.mean * 1000
            out[f"p50_{key}"] = h.quantile(0.5) * 1000
            out[f"count_{key}"] = h.count
    return out


def observed(tool: str, url: str, argv: list[str], read: Any) -> ToolRun:
    """Run one client process with the server's histograms and the client's CPU time around it."""
    before, cpu0 = scrape(url), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800, check=False)
    cpu1, after = resource.getrusage(resource.RUSAGE_CHILDREN), scrape(url)
    if proc.returncode != 0:
        raise RuntimeError(f"{tool} exited {proc.returncode}: {proc.stderr[-3000:]}")
    client, wall_s = read()
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return ToolRun(tool, 0, client, server_ms(before, after), cpu, wall_s)


def kvgate_run(url: str, model: str, shape: Shape, salt: str) -> ToolRun:
    """``python -m kvgate.loadgen`` as G3 runs it (greedy, ignore_eos), the trace's prompts."""
    with tempfile.TemporaryDirectory(prefix="kvgate-serving-") as tmp:
        out = Path(tmp) / "r.json"
        argv = [
            sys.executable, "-m", "kvgate.loadgen", "--url", url, "--model", model,
            "--requests", str(shape.requests), "--prompt-tokens", str(shape.prompt_tokens),
            "--max-tokens", str(shape.output_tokens), "--concurrency", str(shape.concurrency),
            "--salt", salt, "--temperature", "0", "--out", str(out),
        ]  # fmt: skip

        def read() -> tuple[dict[str, float], float]:
            s = json.loads(out.read_text())["summary"]
            assert s["failed"] == 0, s["error_counts"]
            assert s["completed"] == shape.requests, s
            return _client(s), float(s["duration_s"])

        return observed("kvgate", url, argv, read)


def vllm_run(url: str, model: str, shape: Shape, salt: str) -> ToolRun:
    """``vllm bench serve`` on the same prompts (its ``custom`` JSONL dataset), greedy, ignore_eos."""
    with tempfile.TemporaryDirectory(prefix="kvgate-vllm-bench-") as tmp:
        data = Path(tmp) / "trace.jsonl"
        data.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in shape.prompts(salt)))
        argv = [
            str(VLLM_PYTHON), str(Path(__file__).with_name("vllm_cli.py")), "bench", "serve",
            "--backend", "vllm", "--base-url", url, "--endpoint", "/v1/completions", "--model", model,
            "--dataset-name", "custom", "--dataset-path", str(data), "--skip-chat-template",
            "--custom-output-len", str(shape.output_tokens), "--num-prompts", str(shape.requests),
            "--max-concurrency", str(shape.concurrency), "--request-rate", "inf", "--ignore-eos",
            "--temperature", "0", "--metric-percentiles", "50", "--percentile-metrics", "ttft,tpot,itl,e2el",
            "--save-result", "--result-dir", tmp, "--result-filename", "r.json",
        ]  # fmt: skip

        def read() -> tuple[dict[str, float], float]:
            r = json.loads((Path(tmp) / "r.json").read_text())
            assert r["completed"] == shape.requests, r
            return _client(r), float(r["duration"])

        return observed("vllm", url, argv, read)


def _client(summary: dict[str, Any]) -> dict[str, float]:
    """p50 and mean of each latency metric under vLLM's result keys (kvgate uses the same keys)."""
    return {f"{s}_{k}": float(summary[f"{s}_{k}_ms"]) for k in CLIENT_KEYS for s in ("p50", "mean")}
