"""Drift judged as a slope over every window after warm-up, with plateau detection (pure).

First-against-last medians let a soak pass 89 MiB of RSS growth in two minutes that is 6,816 MiB
an hour, and let one outlier window carry throughput retention. Here each series (engines' RSS,
TTFT p99, output throughput, the tier against its cap) is fitted over all windows
after warm-up, and again over the last half of them (the tail):

- **plateau**: the whole soak grew past the limit but the tail did not: the growth ended (caches
  filled), and the tail's slope is judged;
- otherwise the worse of the two slopes is judged (a series that speeds up is judged by its tail).

The slope is Theil-Sen's (robust to an outlier window) and carries its 95 % interval (Student's t,
the residuals' robust spread). PASS needs the
whole interval within the limit, FAIL needs it wholly past it; an interval across the limit is
INVALID, "too short or too noisy to tell", never a PASS. The limit is per hour; the figure keeps
the projection of the judged slope to 72 h beside it, for the report.

>>> fit([0.0, 3600.0, 7200.0], [100.0, 110.0, 120.0])[:2]
(10.0, 100.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.probes.loadgen import median

Window = dict[str, Any]
HOUR_S = 3600.0
PROJECT_H = 72.0
MIN_TAIL = 3
ROBUST_N = 10
MAX_FIT_POINTS = 500  # a 72-h soak in 10-minute windows has 432
# Student's t, two-sided 95 %, by degrees of freedom (1-30); beyond: the normal 1.96
T95: tuple[float, ...] = (
    *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145),
    *(2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048),
    *(2.045, 2.042),
)


def fit(t_s: Sequence[float], values: Sequence[float]) -> tuple[float, float, float | None]:
    """(slope per hour, value at the first point, standard error of the slope per hour or None).

    The slope is Theil-Sen's (the median of every pair's slope), so one outlier window cannot
    carry it; its error is the residuals' spread over the times' spread (robust, 1.4826 × MAD, from
    ROBUST_N windows on; below, their root mean square).
    """
    if len(t_s) > MAX_FIT_POINTS:  # Theil-Sen is quadratic: evenly spaced points, the first and the last
        keep = [round(i * (len(t_s) - 1) / (MAX_FIT_POINTS - 1)) for i in range(MAX_FIT_POINTS)]
        t_s, values = [t_s[i] for i in keep], [values[i] for i in keep]
    n = len(t_s)
    pairs = [
        (values[j] - values[i]) / (t_s[j] - t_s[i])
        for i in range(n)
        for j in range(i + 1, n)
        if t_s[j] != t_s[i]
    ]
    slope = median(pairs)
    start = median([v - slope * (t - t_s[0]) for t, v in zip(t_s, values, strict=True)])
    if n < 3:
        return slope * HOUR_S, start, None
    residuals = [v - start - slope * (t - t_s[0]) for t, v in zip(t_s, values, strict=True)]
    if n >= ROBUST_N:
        spread = 1.4826 * median([abs(r - median(residuals)) for r in residuals])
    else:  # the MAD of a handful is no estimate (a line through two of three points leaves it 0)
        spread = math.sqrt(sum(r * r for r in residuals) / (n - 2))
    mt = sum(t_s) / n
    sxx = sum((t - mt) ** 2 for t in t_s)
    return slope * HOUR_S, start, spread / math.sqrt(sxx) * HOUR_S


def t95(df: int) -> float:
    return T95[df - 1] if df <= len(T95) else 1.96


@dataclass(frozen=True)
class Series:
    """One drifting quantity: its check, its metric, its value per window, and which way is worse."""

    key: str
    metric: str
    unit: str
    value: Callable[[Window], float | None]
    limit: Callable[[G4Profile], float]
    up_is_worse: bool = True
    relative: bool = False  # growth as a fraction of the first windows' median, per hour


def _p99(w: Window) -> float | None:
    v = w["summary"].get("p99_ttft_ms")
    return float(v) if isinstance(v, int | float) else None


def _tok_s(w: Window) -> float | None:
    v = w["summary"].get("output_throughput_tok_per_s")
    return float(v) if isinstance(v, int | float) else None


SERIES = (
    Series(
        "memory-growth",
        "engine_rss_growth_mib_per_h",
        "MiB/h",
        lambda w: w["rss_kib"] / 1024,
        lambda p: p.limits.max_rss_growth_mib_per_h,
    ),
    Series(
        "ttft-drift",
        "ttft_p99_growth_per_h",
        "x/h",
        _p99,
        lambda p: p.limits.max_ttft_p99_growth_per_h,
        relative=True,
    ),
    Series(
        "throughput-retention",
        "throughput_loss_per_h",
        "x/h",
        _tok_s,
        lambda p: p.limits.max_throughput_loss_per_h,
        up_is_worse=False,
        relative=True,
    ),
)


def tier_series(cap_bytes: int) -> Series:
    """The tier's bytes as a share of its capacity; growing at all is judged by where it reaches at 72 h."""
    return Series(
        "tier-growth",
        "tier_cap_share_growth_per_h",
        "x/h",
        lambda w: None if w["cache_dir_bytes"] is None else w["cache_dir_bytes"] / cap_bytes,
        lambda _p: 0.0,  # replaced by the head-room left to the cap, per hour to 72 h (tier_limit)
    )


def points(series: Series, windows: Sequence[Window], t0: float) -> tuple[list[float], list[float]]:
    """(seconds since the soak started at ``t0``, value) of every window that has a value."""
    pts = [(w["end_unix_s"] - t0, v) for w in windows if (v := series.value(w)) is not None]
    return [t for t, _ in pts], [v for _, v in pts]


def judge(series: Series, windows: Sequence[Window], profile: G4Profile, limit: float) -> dict[str, Any]:
    """The stored drift figure of one series (see the module docstring); ``invalid`` says why not judged."""
    t0 = float(windows[0]["start_unix_s"]) if windows else 0.0
    t, v = points(series, list(windows[profile.limits.warmup_windows :]), t0)
    base = {"key": series.key, "metric": series.metric, "unit": series.unit, "limit_per_h": limit}
    if len(t) < max(2 * profile.limits.baseline_windows, MIN_TAIL + 1) or t[-1] == t[0]:
        return base | {"invalid": f"{len(t)} window(s) with a value after warm-up: too few for a slope"}
    scale = median(v[: profile.limits.baseline_windows]) if series.relative else 1.0
    if scale <= 0:
        return base | {"invalid": f"no positive {series.metric} in the first windows to grow from"}
    v = [x / scale for x in v]
    sign = 1.0 if series.up_is_worse else -1.0
    n_tail = max(MIN_TAIL, len(t) // 2)
    whole, tail = fit(t, v), fit(t[-n_tail:], v[-n_tail:])
    plateau = sign * whole[0] > limit >= sign * tail[0]
    use_tail = plateau or sign * tail[0] >= sign * whole[0]
    slope, start, se = tail if use_tail else whole
    from_s = t[-n_tail] if use_tail else t[0]
    judged = sign * slope
    half = None if se is None else t95((n_tail if use_tail else len(t)) - 2) * se
    return base | {
        "scale": scale,
        "growth_per_h": judged,
        "whole_per_h": sign * whole[0],
        "tail_per_h": sign * tail[0],
        "plateau": plateau,
        "judged_on": "tail" if use_tail else "all",
        "interval_per_h": half,
        "windows": len(t),
        "tail_windows": n_tail,
        "span_h": t[-1] / HOUR_S,
        "fit_from_h": from_s / HOUR_S,
        "fit_from_value": start * scale,
        "end_value": (start + slope * (t[-1] - from_s) / HOUR_S) * scale,
        "projected_72h": (start + slope * (PROJECT_H - from_s / HOUR_S)) * scale,
        "limit_72h": (v[0] + sign * limit * PROJECT_H) * scale,
        "invalid": _straddles(judged, half, limit),
    }


def _straddles(judged: float, half: float | None, limit: float) -> str | None:
    if half is None:
        return "fewer than 3 windows in the tail: no interval for the slope"
    if judged - half <= limit < judged + half:
        return (
            f"its 95 % interval [{judged - half:.4g}, {judged + half:.4g}] per hour spans the limit "
            f"{limit:.4g}: too short or too noisy a soak to tell"
        )
    return None


def tier_limit(windows: Sequence[Window], cap: int) -> float:
    """The tier's growth per hour (share of its cap) that would just reach the cap at 72 h."""
    t0 = float(windows[0]["start_unix_s"])
    now_h = (float(windows[-1]["end_unix_s"]) - t0) / HOUR_S
    last = float(windows[-1]["cache_dir_bytes"] or 0)
    return max(0.0, (1.0 - last / cap) / max(PROJECT_H - now_h, 1e-9))


def drift(windows: Sequence[Window], profile: G4Profile, cap: int | None) -> list[dict[str, Any]]:
    """Every series' drift figure, the tier's only with a capacity and a sampled tier directory."""
    out = [judge(s, windows, profile, s.limit(profile)) for s in SERIES]
    if cap and windows and any(w["cache_dir_bytes"] is not None for w in windows):
        out.append(judge(tier_series(cap), windows, profile, tier_limit(windows, cap)))
    return out


def measurement(fig: dict[str, Any], evidence: tuple[str, ...]) -> Measurement:
    """The judged slope (the tier: its share of the cap projected to 72 h); INVALID when there was none
    or its interval spans the limit."""
    if fig["key"] == "tier-growth":
        value, metric, unit = fig.get("projected_72h"), "tier_cap_share_at_72h", "x"
    else:
        value, metric, unit = fig.get("growth_per_h"), fig["metric"], fig["unit"]
    return Measurement(metric, None if value is None else round(value, 6), unit, evidence, fig["invalid"])
