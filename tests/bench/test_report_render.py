"""Rendering is not the bottleneck of a gate (issue 16): measured with pytest-benchmark in `make bench`.

- G1 over 16 hosts renders HTML and PDF within 1.5x the time of one host (the signed PDF
  merges identical results across hosts; report.html keeps every row);
- a 72-hour soak of 16 hosts at 10-second samples renders HTML and PDF in seconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from report_scale import g1_run, soak_run

from kvgate.report import render

ROUNDS = 3


@pytest.fixture(scope="module")
def g1_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    root = tmp_path_factory.mktemp("g1")
    return {n: g1_run(root / str(n), n) for n in (1, 16)}


def test_g1_one_host(benchmark: Any, g1_runs: dict[int, Path]) -> None:
    benchmark.pedantic(render, args=(g1_runs[1],), rounds=ROUNDS, warmup_rounds=1)


def test_g1_sixteen_hosts_within_1_5x_of_one(benchmark: Any, g1_runs: dict[int, Path]) -> None:
    one = min(timed(g1_runs[1]) for _ in range(ROUNDS))
    benchmark.pedantic(render, args=(g1_runs[16],), rounds=ROUNDS, warmup_rounds=1)
    sixteen = benchmark.stats.stats.min
    benchmark.extra_info.update(one_host_s=one, ratio=sixteen / one)
    assert sixteen <= 1.5 * one, f"16 hosts {sixteen:.2f} s vs 1 host {one:.2f} s"


def timed(run_dir: Path) -> float:
    start = time.perf_counter()
    render(run_dir)
    return time.perf_counter() - start


def test_72_hour_soak_of_16_hosts_renders_in_seconds(benchmark: Any, tmp_path: Path) -> None:
    run = soak_run(tmp_path, 16)
    benchmark.pedantic(render, args=(run,), rounds=2, warmup_rounds=0)
    assert benchmark.stats.stats.max < 20.0  # 12 s measured on the 2-core demo machine under load
