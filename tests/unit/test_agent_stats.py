"""Percentiles are computed the way the field computes them (numpy's default linear method)."""

import random

import numpy as np
import pytest

from kvgate.probes.agent.stats import latency_summary, percentile, rate


@pytest.mark.parametrize("n", [1, 2, 3, 10, 16, 101])
def test_percentile_matches_numpy_linear(n: int) -> None:
    values = [random.Random(n).uniform(0, 100) for _ in range(n)]
    for q in (0, 1, 50, 90, 99, 99.9, 100):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-12)


def test_percentile_of_nothing_is_an_error_not_zero() -> None:
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)
    with pytest.raises(ValueError, match="no restore_latency samples"):
        latency_summary([], "restore_latency")


def test_percentile_rejects_q_outside_0_100() -> None:
    with pytest.raises(ValueError, match="outside"):
        percentile([1.0], 101)


def test_latency_summary_names_carry_the_unit() -> None:
    s = latency_summary([3.0, 1.0, 2.0], "restore_latency")
    assert s["restore_latency_p50_s"] == 2.0
    assert s["restore_latency_min_s"] == 1.0
    assert s["restore_latency_max_s"] == 3.0
    assert set(s) == {f"restore_latency_{k}_s" for k in ("p50", "p90", "p99", "min", "max", "mean")}


def test_rate_without_elapsed_time_is_none() -> None:
    assert rate(10, 0.0) is None
    assert rate(10, 2.0) == 5.0
