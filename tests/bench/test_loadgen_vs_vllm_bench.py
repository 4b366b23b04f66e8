"""kvgate's load generator against ``vllm bench serve``, on several trace shapes, each run seen by the server.

Both clients send the same prompts (the load generator's own, as vLLM's ``custom``
JSONL dataset), greedy, ignore_eos, all at t=0 under a concurrency cap, alternating
ABBA; around every run the server's own histograms are diffed (tests/bench/serving.py).

- **Null server** (tests/nullserver.py: 50 ms to the first token, 5 ms per token,
  its own vLLM-named histograms): no engine to perturb, so only the clients differ.
  Both must read the server's TPOT and ITL as the server measured them (±2 %), and kvgate
  may add no more to TTFT (over the server's own, from the request's arrival) than vLLM's
  client does.
- **vLLM's CPU server** (prefix caching off) on the tiny HF Llama, three shapes: the
  project's trace (32 × ~1k-token prompts, 16 out, conc 16), a chat-like one (fewer,
  shorter prompts, long outputs, conc 4) and one between. What the two clients read
  differently must be what the server itself measured differently over their runs: the
  kvgate / vllm ratio of mean TPOT over the server's own ratio within 10 % on every shape,
  of mean TTFT within 5 % on the project's trace (elsewhere the HTTP round trip and the
  tokenizing before the server's clock starts are most of a short TTFT). The tables show
  both clients beside the server.

Run: ``make bench`` (needs ``make engine``: vLLM in .venv-vllm). Results: docs/benchmarks.md.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from interval import PairVerdict
from nullserver import SERVE
from serving import VLLM_PYTHON, Campaign, Server, Shape, abba

from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.configuration.inventory.schema import Host
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.model_staging import _tiny_hf
from kvgate.transport.local import LocalExecutor

PROJECT = Shape("project", requests=32, prompt_tokens=1024, output_tokens=16, concurrency=16)
CHAT = Shape("chat", requests=16, prompt_tokens=256, output_tokens=256, concurrency=4)
MID = Shape("mid", requests=32, prompt_tokens=512, output_tokens=64, concurrency=8)
PAIRS = 6  # even: each client goes first in half the rounds
NULL_FIRST_TOKEN_MS, NULL_TOKEN_MS = 50, 5
SERVER_AGREEMENT = 0.02  # on the null server each client's mean TPOT/ITL is the server's own
TTFT_TARGET = 0.05
TPOT_TARGET = 0.10

pytestmark = [
    pytest.mark.timeout(3600),
    pytest.mark.skipif(not VLLM_PYTHON.exists(), reason="vLLM not installed: make engine"),
]


@pytest.fixture(scope="module")
def model() -> str:
    """The tiny HF Llama: what the vLLM server serves and where vllm bench serve reads its tokenizer."""
    return _tiny_hf(LocalExecutor(), Host(transport="local"), str(VLLM_PYTHON))


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory: pytest.TempPathFactory, model: str) -> Iterator[Server]:
    """vLLM's CPU server without prefix caching (no run can hit another's cache)."""
    tmp = tmp_path_factory.mktemp("vllm")
    where = Placement(
        run_dir=str(tmp / "run"),
        model=model,
        cache_dir=str(tmp / "cache"),
        port=18190,
        python=str(VLLM_PYTHON),
    )
    with EngineService(LocalExecutor(), load_profile(PROFILE_DIR / "vllm-cpu-recompute.yaml"), where) as eng:
        yield Server(eng.url("").rstrip("/"), model)


@pytest.fixture(scope="module")
def null_server(model: str) -> Iterator[Server]:
    """The null server in its own process, with a known first-token and per-token delay."""
    argv = [
        *SERVE,
        "--first-token-delay-ms",
        str(NULL_FIRST_TOKEN_MS),
    ]
    proc = subprocess.Popen(
        [*argv, "--token-delay-ms", str(NULL_TOKEN_MS)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    try:
        yield Server(proc.stdout.readline().split()[1], model)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()


def campaign(benchmark: Any, server: Server, shape: Shape, until: Callable[[Campaign], bool]) -> Campaign:
    """One warm-up run of each client (the engine compiles its first batches), then the ABBA pairs,
    more while ``until`` is not yet decided (within the budget)."""
    found: dict[str, Campaign] = {}

    def run() -> None:
        abba(server, shape, pairs=1, rest_s=0)
        found["c"] = abba(server, shape, pairs=PAIRS, until=until)

    benchmark.pedantic(run, rounds=1, iterations=1)
    c = found["c"]
    benchmark.extra_info.update(c.record())
    print(f"\n{c.table()}")
    return c


def null_server_verdicts(c: Campaign) -> dict[str, PairVerdict]:
    found = {
        f"{tool} {metric} client / server": c.agreement_verdict(tool, metric, SERVER_AGREEMENT)
        for tool in ("kvgate", "vllm")
        for metric in ("tpot", "itl")
    }
    return found | {"TTFT kvgate excess − vllm excess (ms)": c.excess_verdict("ttft")}


def vllm_verdicts(c: Campaign) -> dict[str, PairVerdict]:
    found = {"TPOT kvgate/vllm over the server's own ratio": c.explained_verdict("tpot", TPOT_TARGET)}
    if c.shape is PROJECT:  # prefill-bound: the server's TTFT is most of what either client reads
        found["TTFT kvgate/vllm over the server's own ratio"] = c.explained_verdict("ttft", TTFT_TARGET)
    return found


def decided(verdicts: Callable[[Campaign], dict[str, PairVerdict]]) -> Callable[[Campaign], bool]:
    return lambda c: all(v.verdict != "undecided" for v in verdicts(c).values())


def assert_met(verdicts: dict[str, PairVerdict]) -> None:
    """Every target met (its interval clears it); an undecided one is not met either."""
    for what, v in verdicts.items():
        print(f"  {what}: {v}")
    assert all(v.verdict == "met" for v in verdicts.values()), {k: str(v) for k, v in verdicts.items()}


@pytest.mark.parametrize("shape", [PROJECT, CHAT], ids=lambda s: s.name)
def test_both_clients_read_the_null_servers_own_timing(
    benchmark: Any, null_server: Server, shape: Shape
) -> None:
    """TPOT and ITL are the server's own for both clients; kvgate adds no more to TTFT than vLLM's client."""
    c = campaign(benchmark, null_server, shape, decided(null_server_verdicts))
    assert_met(null_server_verdicts(c))


@pytest.mark.parametrize("shape", [PROJECT, CHAT, MID], ids=lambda s: s.name)
def test_loadgen_reads_the_vllm_server_as_vllm_bench_serve_does(
    benchmark: Any, vllm_server: Server, shape: Shape
) -> None:
    """What the two clients read differently, the server measured differently too (see ``explained``)."""
    c = campaign(benchmark, vllm_server, shape, decided(vllm_verdicts))
    assert_met(vllm_verdicts(c))
