"""The soak's sampler and the integrity load's bookkeeping: each ≤ 1 % of a core over a soak (issue 26).

A real soak (the agent's soak workload, detached through agentctl) against kvgate's null
streaming server as its engine (its own process group, as engines are started), with a tier
directory of 4,096 chunk files for the sampler to walk, and the integrity agent job beside it
on scratch, following the soak. The sampler's cost is the CPU seconds its samples took
(``sample_cpu_s`` of every window: the thread's own CPU time) over the soak's wall time; the
integrity load's bookkeeping is its agent process's own CPU (fio's is the I/O load itself, its
child's) over its wall time. Ratios of a whole soak, not a timed call.

Run: ``.venv/bin/pytest tests/bench/test_soak_overhead.py --benchmark-only``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nullserver import SERVE

from kvgate.configuration.gate_profiles import load_g4_profile
from kvgate.configuration.inventory import Volume
from kvgate.orchestration.g4 import integrity
from kvgate.probes import agentctl
from kvgate.probes.scratch import checked
from kvgate.transport.local import LocalExecutor

pytestmark = pytest.mark.timeout(600)
TARGET = 0.01  # of one core
SOAK_S, WINDOW_S = 120, 20  # smoke's windows
TIER_FILES = 4096
EX = LocalExecutor("localhost")


@pytest.fixture
def engine() -> Iterator[tuple[int, str]]:
    argv = [*SERVE, "--port", "0"]
    argv += ["--first-token-delay-ms", "20", "--token-delay-ms", "5"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, start_new_session=True, text=True)
    assert proc.stdout is not None
    url = proc.stdout.readline().split()[1]
    yield proc.pid, url
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def soak_spec(url: str, pgid: int, tier: Path) -> dict[str, Any]:
    return {
        "urls": [url],
        "model": "null",
        "duration_s": SOAK_S,
        "window_s": WINDOW_S,
        "concurrency": 4,
        "prompt_tokens": 512,
        "max_tokens": 8,
        "canary_prompts": 2,
        "canary_max_tokens": 8,
        "logprobs": 5,
        "salt": "bench",
        "volume": None,
        "engines": [{"pgid": pgid, "cache_dir": str(tier), "metrics_url": None, "hit_counter": None}],
    }


def test_sampler_and_integrity_bookkeeping_stay_under_one_percent_of_a_core(
    tmp_path: Path, engine: tuple[int, str], benchmark: Any
) -> None:
    tier = tmp_path / "tier"
    tier.mkdir()
    for i in range(TIER_FILES):  # an LMCache-like tier directory the sampler walks every window
        (tier / f"chunk-{i:05d}.kv").write_bytes(b"\0" * 4096)
    vol = Volume(path=str(tmp_path), kind="candidate", scratch=True)
    pgid, url = engine
    windows: list[dict[str, Any]] = []

    def on_event(e: dict[str, Any]) -> None:
        if e.get("event") == "window":
            windows.append(e)

    def run() -> tuple[dict[str, Any], dict[str, Any]]:
        soak = agentctl.start(EX, "soak", soak_spec(url, pgid, tier), state_root=str(tmp_path / "jobs"))
        spec = integrity.spec(load_g4_profile("smoke"), soak_state_dir=soak.state_dir, duration_s=SOAK_S * 3)
        target = checked(EX, vol, f"{tmp_path}/integrity")
        side = integrity.start(EX, target, spec, python=sys.executable)
        soaked = agentctl.wait(EX, soak, on_event, timeout_s=SOAK_S * 4, interval_s=1.0)
        followed = integrity.follow(EX, side, timeout_s=300, poll_s=1.0)
        return soaked, followed.result

    soaked, checked_load = benchmark.pedantic(run, rounds=1, iterations=1)
    sampler = sum(w["sample_cpu_s"] for w in windows) / soaked["soak_s"]
    bookkeeping = checked_load["cpu_s"] / checked_load["wall_s"]
    benchmark.extra_info |= {
        "windows": len(windows),
        "sampler_cpu_fraction_of_a_core": round(sampler, 6),
        "integrity_cpu_fraction_of_a_core": round(bookkeeping, 6),
        "integrity_cycles": checked_load["cycles"],
    }
    print(f"\nsampler {sampler:.4%} of a core, integrity bookkeeping {bookkeeping:.4%} of a core")
    assert len(windows) >= SOAK_S // WINDOW_S - 1
    assert checked_load["cycles"] >= 3
    assert sampler <= TARGET
    assert bookkeeping <= TARGET
