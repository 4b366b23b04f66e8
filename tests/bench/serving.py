"""kvgate's load generator and ``vllm bench serve`` on one server: runs, each seen by the server too.

Each run is one client process (``python -m kvgate.probes.loadgen`` or ``vllm bench serve``)
sending one trace; around it the server's own histograms (``/metrics``, vLLM's names:
TTFT from arrival, inter-token latency, per-request time per output token, end to
end) are diffed. The client's CPU seconds over its measured run come from the client
itself: kvgate's loadgen records them (``client_cpu_s``); for vLLM's client they are
read from ``/proc/<pid>/stat`` as it prints the start and the end of its main run.
So every run says what the client measured, what the server measured over the same
requests, and how much CPU the client took from a machine it shares with the server.

>>> s = Shape("demo", requests=4, prompt_tokens=64, output_tokens=8, concurrency=2)
>>> len(s.prompts("x")), s.label
(4, '4 × 64-token prompts, 8 out, conc 2')
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interval import PairVerdict, judge_pairs

from kvgate.probes.engines.metrics import Snapshot, diff, parse
from kvgate.probes.loadgen import PromptSpec

REPO = Path(__file__).resolve().parents[2]
VLLM_PYTHON = REPO / ".venv-vllm" / "bin" / "python"
CLIENT_KEYS = ("ttft", "tpot", "itl", "e2el")
EXTRA_PAIRS_BUDGET_S = 300.0  # an undecided campaign runs more ABBA rounds for at most this long
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
VLLM_MARKS = (
    "Starting main benchmark run",
    "Serving Benchmark Result",
)  # printed by vllm/benchmarks/serve.py
# the server's own histograms (vLLM 0.32 v1/metrics/loggers.py), by the client metric they correspond to
SERVER_HISTOGRAMS = {
    "ttft": "vllm:time_to_first_token_seconds",  # API server: arrival (after tokenizing) → first token
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
class Server:
    """The server under test: its base URL (with vLLM's /metrics) and the model it serves."""

    url: str
    model: str


@dataclass(frozen=True)
class ToolRun:
    """One run of one client: its p50/mean per metric (ms), the server's over the run, its CPU."""

    tool: str
    position: int  # 0: this tool went first in its pair
    client_ms: dict[str, float]  # p50_ttft, mean_ttft, p50_tpot, … as the client computed them
    server_ms: dict[str, float]  # mean_ttft (exact: sum / count), p50_ttft (a bucket estimate), …
    client_cpu_s: float  # the client's CPU seconds over its measured run
    duration_s: float  # the client's measured run
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return self.__dict__.copy()

    @property
    def chunks(self) -> float:
        """Token chunks the server sent in the run (its inter-token samples, one first token per request)."""
        return self.server_ms.get("count_itl", 0.0) + self.server_ms.get("count_ttft", 0.0)


def scrape(url: str) -> Snapshot:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as response:
        return parse(response.read().decode())


def server_ms(before: Snapshot, after: Snapshot) -> dict[str, float]:
    """Mean (exact: sum / count) and bucket-estimated p50 of each server histogram over a run, in ms."""
    window, out = diff(before, after), {}
    for key, name in SERVER_HISTOGRAMS.items():
        h = window.histogram(name)
        if h.count > 0:
            out |= {
                f"mean_{key}": h.mean * 1000,
                f"p50_{key}": h.quantile(0.5) * 1000,
                f"count_{key}": h.count,
            }
    return out


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (all its threads) so far, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


Read = Callable[[], tuple[dict[str, float], float, float | None]]  # client ms, duration s, CPU s


def observed(
    tool: str, server: Server, argv: list[str], read: Read, marks: tuple[str, str] | None = None
) -> ToolRun:
    """Run one client process with the server's histograms diffed around it.

    ``marks``: the lines the client prints as its measured run starts and ends, when it
    does not report its own CPU time (vllm bench serve).
    """
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the marks arrive as they are printed
    before = scrape(server.url)
    with tempfile.TemporaryFile("w+") as err:  # a file, not a pipe: tqdm must never block the client
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        marked = _marked_cpu_s(proc, marks) if marks else None
        proc.communicate(timeout=1800)
        err.seek(0)
        stderr = err.read()
    after = scrape(server.url)
    if proc.returncode != 0:
        raise RuntimeError(f"{tool} exited {proc.returncode}: {stderr[-3000:]}")
    client, duration_s, cpu_s = read()
    cpu = marked if cpu_s is None else cpu_s
    assert cpu is not None, f"{tool}: no CPU time for its run"
    return ToolRun(tool, 0, client, server_ms(before, after), cpu, duration_s)


def _marked_cpu_s(proc: subprocess.Popen[str], marks: tuple[str, str]) -> float:
    """The client's CPU seconds from the line holding ``marks[0]`` to the one holding ``marks[1]``."""
    assert proc.stdout is not None
    start = None
    for line in proc.stdout:
        if start is None and marks[0] in line:
            start = process_cpu_s(proc.pid)
        elif start is not None and marks[1] in line:
            return process_cpu_s(proc.pid) - start
    raise RuntimeError(f"the client never printed {marks[0]!r} then {marks[1]!r}")


def kvgate_run(server: Server, shape: Shape, salt: str) -> ToolRun:
    """``python -m kvgate.probes.loadgen`` as G3 runs it (greedy, ignore_eos), the trace's prompts."""
    with tempfile.TemporaryDirectory(prefix="kvgate-serving-") as tmp:
        out = Path(tmp) / "r.json"
        argv = [
            sys.executable,
            "-m",
            "kvgate.probes.loadgen",
            "--url",
            server.url,
            "--model",
            server.model,
            "--requests",
            str(shape.requests),
            "--prompt-tokens",
            str(shape.prompt_tokens),
            "--max-tokens",
            str(shape.output_tokens),
            "--concurrency",
            str(shape.concurrency),
            "--salt",
            salt,
            "--temperature",
            "0",
            "--out",
            str(out),
        ]

        def read() -> tuple[dict[str, float], float, float | None]:
            doc = json.loads(out.read_text())
            s = doc["summary"]
            assert s["failed"] == 0, s["error_counts"]
            assert s["completed"] == shape.requests, s
            return _client(s), float(s["duration_s"]), float(doc["client_cpu_s"])

        return observed("kvgate", server, argv, read)


def vllm_run(server: Server, shape: Shape, salt: str) -> ToolRun:
    """``vllm bench serve`` on the same prompts (its ``custom`` JSONL dataset), greedy, ignore_eos."""
    with tempfile.TemporaryDirectory(prefix="kvgate-vllm-bench-") as tmp:
        data = Path(tmp) / "trace.jsonl"
        data.write_text("".join(json.dumps({"prompt": p}) + "\n" for p in shape.prompts(salt)))
        argv = [
            str(VLLM_PYTHON),
            str(Path(__file__).with_name("vllm_cli.py")),
            "bench",
            "serve",
            "--backend",
            "vllm",
            "--base-url",
            server.url,
            "--endpoint",
            "/v1/completions",
            "--model",
            server.model,
            "--dataset-name",
            "custom",
            "--dataset-path",
            str(data),
            "--skip-chat-template",
            "--custom-output-len",
            str(shape.output_tokens),
            "--num-prompts",
            str(shape.requests),
            "--max-concurrency",
            str(shape.concurrency),
            "--request-rate",
            "inf",
            "--ignore-eos",
            "--temperature",
            "0",
            "--metric-percentiles",
            "50",
            "--percentile-metrics",
            "ttft,tpot,itl,e2el",
            "--save-result",
            "--result-dir",
            tmp,
            "--result-filename",
            "r.json",
        ]

        def read() -> tuple[dict[str, float], float, float | None]:
            r = json.loads((Path(tmp) / "r.json").read_text())
            assert r["completed"] == shape.requests, r
            return _client(r), float(r["duration"]), None

        return observed("vllm", server, argv, read, VLLM_MARKS)


def _client(summary: dict[str, Any]) -> dict[str, float]:
    """p50 and mean of each latency metric under vLLM's result keys (kvgate uses the same keys)."""
    return {f"{s}_{k}": float(summary[f"{s}_{k}_ms"]) for k in CLIENT_KEYS for s in ("p50", "mean")}


@dataclass(frozen=True)
class Campaign:
    """ABBA pairs of both clients on one server and one trace shape (A B, B A, …)."""

    shape: Shape
    runs: tuple[ToolRun, ...]

    def of(self, tool: str) -> list[ToolRun]:
        return [r for r in self.runs if r.tool == tool]

    def client(self, tool: str, key: str) -> float:
        """Median over the tool's runs of one client statistic (``p50_ttft``, ``mean_tpot``, …)."""
        return statistics.median(r.client_ms[key] for r in self.of(tool))

    def server(self, tool: str, key: str) -> float:
        """Median over the tool's runs of what the server measured (``mean_tpot``, …)."""
        return statistics.median(r.server_ms[key] for r in self.of(tool))

    def ratio(self, key: str) -> float:
        """kvgate's reading over vllm bench serve's (medians of the runs)."""
        return self.client("kvgate", key) / self.client("vllm", key)

    def explained(self, metric: str) -> float:
        """kvgate / vllm as the clients read a mean, over the same ratio as the server measured it.

        1 when the two clients differ only because the server itself ran differently while
        each one measured (what a shared machine, or one client slowing the server, does).
        """
        server = self.server("kvgate", f"mean_{metric}") / self.server("vllm", f"mean_{metric}")
        return self.ratio(f"mean_{metric}") / server

    def agreement(self, tool: str, metric: str) -> float:
        """Median over the tool's runs of client mean / server mean: 1 when the client reads the server."""
        return statistics.median(
            r.client_ms[f"mean_{metric}"] / r.server_ms[f"mean_{metric}"] for r in self.of(tool)
        )

    def excess_ms(self, tool: str, metric: str) -> float:
        """Median over the tool's runs of client mean − server mean (what the client adds)."""
        return statistics.median(
            r.client_ms[f"mean_{metric}"] - r.server_ms[f"mean_{metric}"] for r in self.of(tool)
        )

    def pairs(self) -> list[tuple[ToolRun, ToolRun]]:
        """(kvgate, vllm) of each ABBA round."""
        return list(zip(self.of("kvgate"), self.of("vllm"), strict=True))

    def explained_verdict(self, metric: str, tolerance: float) -> PairVerdict:
        """`explained` per pair, judged by the interval of its median: within 1 ± ``tolerance``?"""
        key = f"mean_{metric}"
        values = [
            (kv.client_ms[key] / vl.client_ms[key]) / (kv.server_ms[key] / vl.server_ms[key])
            for kv, vl in self.pairs()
        ]
        return judge_pairs(values, target=1 - tolerance, at_most=1 + tolerance)

    def agreement_verdict(self, tool: str, metric: str, tolerance: float) -> PairVerdict:
        """Client mean / server mean per run of ``tool``: within 1 ± ``tolerance``?"""
        key = f"mean_{metric}"
        values = [r.client_ms[key] / r.server_ms[key] for r in self.of(tool)]
        return judge_pairs(values, target=1 - tolerance, at_most=1 + tolerance)

    def excess_verdict(self, metric: str) -> PairVerdict:
        """Per pair, what kvgate adds to the server's mean minus what vLLM's client adds: at most 0?"""
        key = f"mean_{metric}"
        values = [
            (kv.client_ms[key] - kv.server_ms[key]) - (vl.client_ms[key] - vl.server_ms[key])
            for kv, vl in self.pairs()
        ]
        return judge_pairs(values, at_most=0.0)

    def cpu_us_per_chunk(self, tool: str) -> float:
        return statistics.median(1e6 * r.client_cpu_s / r.chunks for r in self.of(tool) if r.chunks)

    def table(self) -> str:
        """Per statistic: both clients' medians, kvgate / vllm, and the server's own over each tool's runs."""
        lines = [f"{self.shape.name}: {self.shape.label}, {len(self.of('kvgate'))} ABBA pairs"]
        lines.append(
            f"  {'ms':11} {'kvgate':>9} {'vllm':>9} {'kv/vllm':>8}   {'server|kv':>9} {'server|vllm':>11}"
        )
        for key in ("p50_ttft", "mean_ttft", "p50_tpot", "mean_tpot", "p50_itl", "mean_itl"):
            mean = "mean_" + key.split("_", 1)[1]
            kv, vl = self.client("kvgate", key), self.client("vllm", key)
            ratio = f"{kv / vl:8.3f}" if vl else f"{'—':>8}"
            seen = (
                f"{self.server('kvgate', mean):9.3f} {self.server('vllm', mean):11.3f}" if key == mean else ""
            )
            lines.append(f"  {key:11} {kv:9.3f} {vl:9.3f} {ratio}   {seen}")
        for tool in ("kvgate", "vllm"):
            lines.append(
                f"  {tool}: TTFT client − server {self.excess_ms(tool, 'ttft'):+.2f} ms, "
                f"TPOT client / server {self.agreement(tool, 'tpot'):.3f}, "
                f"CPU {self.cpu_us_per_chunk(tool):.0f} µs per token chunk"
            )
        return "\n".join(lines)

    def record(self) -> dict[str, Any]:
        return {"shape": self.shape.__dict__, "runs": [r.record() for r in self.runs]}


def abba(
    server: Server,
    shape: Shape,
    *,
    pairs: int,
    rest_s: float = 2.0,
    until: Callable[[Campaign], bool] | None = None,
    budget_s: float = EXTRA_PAIRS_BUDGET_S,
) -> Campaign:
    """``pairs`` rounds of both clients, the order reversed every round, each run on fresh prompts;
    then, while ``until(campaign)`` is false, two rounds more, for at most ``budget_s``."""
    runs: list[ToolRun] = []
    deadline = math.inf
    for i in itertools.count():
        if i == pairs:
            deadline = time.monotonic() + budget_s
        at_round_end = i == pairs or (i > pairs and i % 2 == 0)
        if at_round_end and (
            until is None or time.monotonic() > deadline or until(Campaign(shape, tuple(runs)))
        ):
            break
        order = (kvgate_run, vllm_run) if i % 2 == 0 else (vllm_run, kvgate_run)
        for position, run in enumerate(order):
            time.sleep(rest_s)
            runs.append(dataclasses.replace(run(server, shape, f"{shape.name}/{i}"), position=position))
    return Campaign(shape, tuple(runs))
