"""Prometheus text scraped on the engine host, parsed, and diffed over a measured window.

Counters and histogram parts are subtracted (``after - before``); gauges keep the
``after`` value. A counter that went down means the engine restarted inside the
window: that raises, because the delta would be a lie.

>>> before = parse('vllm:prefix_cache_hits_total{engine="0"} 10\\n')
>>> after = parse('vllm:prefix_cache_hits_total{engine="0"} 42\\n')
>>> diff(before, after).value("vllm:prefix_cache_hits_total")
32.0
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from kvgate.base.errors import LabError
from kvgate.configuration.engine_series import Labels, labels

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kvgate.transport import Executor

Key = tuple[str, Labels]

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?\s*$")
_MONOTONIC_SUFFIXES = ("_total", "_count", "_sum", "_bucket")
# An engine sharded by tensor or pipeline parallelism may export the same counter once per rank
# (SGLang: tp_rank, pp_rank labels): every rank sees every token, so those copies are one count,
# not TP of them. Series that differ only in these labels are collapsed by their maximum; any
# other label (a data-parallel replica, vLLM's engine) is a separate count and is summed.
RANK_LABELS = frozenset({"tp_rank", "pp_rank", "attn_tp_rank"})
_SUFFIXES = (*_MONOTONIC_SUFFIXES, "_created")


class MetricsError(LabError):
    """Metrics could not be scraped or parsed, a series is missing, or a counter went backwards."""


@dataclass(frozen=True)
class Histogram:
    """Cumulative buckets ``(le, count)`` plus sum and count, summed over matching series."""

    buckets: tuple[tuple[float, float], ...]
    sum: float
    count: float

    @property
    def mean(self) -> float:
        if self.count <= 0:
            raise MetricsError("histogram has no observations: its mean is undefined")
        return self.sum / self.count

    def quantile(self, q: float) -> float:
        """Prometheus ``histogram_quantile(q, …)``: linear inside the bucket that holds rank q × count.

        As prometheus/prometheus ``promql/quantile.go`` ``bucketQuantile``: the first bucket
        starts at 0, a rank in the +Inf bucket returns the highest finite bound. An estimate:
        it is only as fine as the engine's buckets.

        >>> Histogram(((0.1, 2.0), (0.2, 6.0), (float("inf"), 6.0)), 0.7, 6.0).quantile(0.5)
        0.125
        """
        if self.count <= 0:
            raise MetricsError("histogram has no observations: its quantiles are undefined")
        if not 0 <= q <= 1:
            raise ValueError(f"quantile {q} outside [0, 1]")
        rank, below, start = q * self.count, 0.0, 0.0
        for le, cumulative in self.buckets:
            if cumulative >= rank:
                if le == float("inf"):
                    return start
                share = (rank - below) / (cumulative - below) if cumulative > below else 0.0
                return start + (le - start) * share
            below, start = cumulative, le
        raise MetricsError("histogram has no +Inf bucket holding every observation")


@dataclass(frozen=True)
class Snapshot:
    """Every sample of one scrape (or of a diff), with the families' declared types."""

    samples: Mapping[Key, float]
    types: Mapping[str, str]

    def kind(self, name: str) -> str:
        """The type of a sample name: counter, gauge, histogram, summary or untyped."""
        if name in self.types:
            return self.types[name]
        if name.endswith("_created"):
            return "gauge"
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and name.removesuffix(suffix) in self.types:
                return self.types[name.removesuffix(suffix)]
        return "counter" if name.endswith(_MONOTONIC_SUFFIXES) else "untyped"

    def has(self, name: str) -> bool:
        return any(n == name for n, _ in self.samples)

    def value(self, name: str, **labels: str) -> float:
        """Sum of the series named ``name`` whose labels include ``labels`` (ranks once); missing → raise.

        >>> parse('hits_total{tp_rank="0"} 7\\nhits_total{tp_rank="1"} 7\\n').value("hits_total")
        7.0
        """
        want = set(labels.items())
        per_replica: dict[Labels, float] = {}
        for (n, lab), v in self.samples.items():
            if n == name and want <= set(lab):
                replica = tuple(kv for kv in lab if kv[0] not in RANK_LABELS)
                per_replica[replica] = max(v, per_replica.get(replica, v))
        if not per_replica:
            raise MetricsError(f"no series {name}{labels or ''} in the scrape")
        return float(sum(per_replica.values()))

    def histogram(self, name: str, **labels: str) -> Histogram:
        """The histogram ``name`` (buckets summed across matching series)."""
        want = set(labels.items())
        per_bucket: dict[tuple[float, Labels], float] = {}
        for (n, lab), v in self.samples.items():
            if n == f"{name}_bucket" and want <= set(lab):
                key = (float(dict(lab)["le"]), tuple(kv for kv in lab if kv[0] not in RANK_LABELS | {"le"}))
                per_bucket[key] = max(v, per_bucket.get(key, v))
        per_le: dict[float, float] = {}
        for (le, _replica), v in per_bucket.items():
            per_le[le] = per_le.get(le, 0.0) + v
        if not per_le:
            raise MetricsError(f"no histogram {name}{labels or ''} in the scrape")
        buckets = tuple(sorted(per_le.items()))
        return Histogram(buckets, self.value(f"{name}_sum", **labels), self.value(f"{name}_count", **labels))


def parse(text: str) -> Snapshot:
    """Parse Prometheus text exposition (0.0.4 or OpenMetrics) into a Snapshot."""
    samples: dict[Key, float] = {}
    types: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) >= 4:
                types[parts[2]] = parts[3]
            continue
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            raise MetricsError(f"line {lineno}: not a Prometheus sample: {raw[:120]!r}")
        samples[(m.group(1), labels(m.group(2)))] = float(m.group(3))
    return Snapshot(MappingProxyType(samples), MappingProxyType(types))


def _monotonic(snap: Snapshot, name: str) -> bool:
    """Counters, histogram parts and a summary's sum/count only ever grow."""
    if name.endswith("_created"):
        return False
    kind = snap.kind(name)
    if kind == "summary":
        return name.endswith(("_sum", "_count"))
    return kind in ("counter", "histogram")


def diff(before: Snapshot, after: Snapshot) -> Snapshot:
    """Counter deltas over a window; gauges take the ``after`` value. A counter reset raises."""
    out: dict[Key, float] = {}
    for key, value in after.samples.items():
        if not _monotonic(after, key[0]):
            out[key] = value
            continue
        start = before.samples.get(key, 0.0)
        if value < start:
            where = f"{key[0]}{dict(key[1]) or ''}"
            raise MetricsError(
                f"counter {where} went back from {start:g} to {value:g}: restart inside the window?"
            )
        out[key] = value - start
    return Snapshot(MappingProxyType(out), after.types)


def scrape(ex: Executor, python: str, url: str, *, timeout_s: float = 10.0) -> Snapshot:
    """GET a /metrics URL on the engine host and parse it."""
    from kvgate.probes.engines.hostcall import http

    res = http(ex, python, "GET", url, timeout_s=timeout_s)
    if not res.ok:
        raise MetricsError(f"{ex.host}: GET {url} gave {res.status} {res.error}".rstrip())
    return parse(res.body)


__all__ = ["Histogram", "MetricsError", "Snapshot", "diff", "parse", "scrape"]
