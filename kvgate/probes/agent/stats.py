"""Percentiles the way numpy computes them by default (linear interpolation), in the stdlib.

>>> percentile([1.0, 2.0, 3.0, 4.0], 50)
2.5
>>> percentile([10.0, 20.0], 99)
19.9
>>> latency_summary([1.0, 3.0], "restore_latency")["restore_latency_p50_s"]
2.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with numpy's default 'linear' method; empty input raises."""
    if not values:
        raise ValueError("percentile of an empty sample")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0..100")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_summary(values_s: Sequence[float], name: str) -> dict[str, float]:
    """``{name}_p50_s``, p90, p99, min, max and mean of a list of seconds."""
    if not values_s:
        raise ValueError(f"no {name} samples")
    out = {f"{name}_p{q}_s": percentile(values_s, q) for q in (50, 90, 99)}
    out[f"{name}_min_s"] = min(values_s)
    out[f"{name}_max_s"] = max(values_s)
    out[f"{name}_mean_s"] = sum(values_s) / len(values_s)
    return out


def rate(nbytes: int, seconds: float) -> float | None:
    """Bytes per second, None when no time elapsed."""
    return nbytes / seconds if seconds > 0 else None
