"""An engine's own serving latency over one measured load: TTFT, ITL and TPOT from its /metrics histograms.

The client's numbers (kvgate.probes.loadgen, ``vllm bench serve``'s definitions) are what a
user sees; the engine's say what the server did over the same requests. Shown side by
side, a reader sees which number the server confirms: a client that lags behind the
stream, or a server slowed by a client sharing its cores, shows as a gap between them.

Per metric the mean is exact (the histogram's sum over its count); the p50 is
Prometheus' bucket estimate (:meth:`Histogram.quantile`), only as fine as the engine's
buckets. Several engines (instances driven together) are summed bucket by bucket.

>>> h = Histogram(((0.01, 1.0), (0.02, 3.0), (float("inf"), 4.0)), 0.08, 4.0)
>>> latency({"itl": [h]})
{'mean_itl_ms': 20.0, 'p50_itl_ms': 15.0, 'count_itl': 4.0}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.probes.engines.metrics import Histogram, MetricsError, Snapshot

METRICS = ("ttft", "itl", "tpot")  # the client's names for what the histograms measure


def named(profile: EngineProfile) -> dict[str, str]:
    """Metric → the profile's histogram name, for those it names."""
    names = {"ttft": profile.ttft_histogram, "itl": profile.itl_histogram, "tpot": profile.tpot_histogram}
    return {k: v for k, v in names.items() if v}


def histograms(window: Snapshot, profile: EngineProfile) -> dict[str, Histogram]:
    """The profile's latency histograms in a diffed scrape (one the engine does not export is left out)."""
    out = {}
    for metric, name in named(profile).items():
        try:
            out[metric] = window.histogram(name)
        except MetricsError:
            continue
    return out


def combined(parts: Sequence[Histogram]) -> Histogram:
    """Histograms of the same buckets summed (engines driven together)."""
    per_le: dict[float, float] = {}
    for h in parts:
        for le, count in h.buckets:
            per_le[le] = per_le.get(le, 0.0) + count
    return Histogram(tuple(sorted(per_le.items())), sum(h.sum for h in parts), sum(h.count for h in parts))


def latency(per_metric: Mapping[str, Sequence[Histogram]]) -> dict[str, float]:
    """``mean_<m>_ms``, ``p50_<m>_ms`` and ``count_<m>`` of each metric with observations."""
    out: dict[str, float] = {}
    for metric in METRICS:
        parts = per_metric.get(metric) or ()
        h = combined(parts) if parts else None
        if h is not None and h.count > 0:
            out |= {f"mean_{metric}_ms": h.mean * 1000, f"p50_{metric}_ms": h.quantile(0.5) * 1000}
            out[f"count_{metric}"] = h.count
    return out


def engines_latency(found: Sequence[Mapping[str, Histogram]]) -> dict[str, float] | None:
    """The latency of engines driven together; None when none of them exported a histogram."""
    per_metric: dict[str, list[Histogram]] = {}
    for histos in found:
        for metric, h in histos.items():
            per_metric.setdefault(metric, []).append(h)
    return latency(per_metric) or None
