"""fio's latency histogram, so percentiles merge across jobs and hosts the way fio computes them.

fio keeps completion latencies in FIO_IO_U_PLAT_NR log-linear buckets (stat.h:
FIO_IO_U_PLAT_BITS=6, FIO_IO_U_PLAT_VAL=64, FIO_IO_U_PLAT_GROUP_NR=29 in fio 3.33)
and json+ prints the non-empty ones under ``clat_ns.bins`` keyed by
``plat_idx_to_val(i)``: the bucket's mid value in ns, not its index. Summing the
counts of equal keys merges jobs exactly; averaging percentiles does not
(fio #1668, gcsfuse PR #1503, benchmark-operator #101).

The last bucket is open-ended: every sample ≥ CEILING_FLOOR_NS (~17.05 s) is
counted there and reported as CEILING_NS (17,112,760,320 ns), the "17113 msec"
in fio #1668. (gcsfuse PR #1503 quotes ~14 ms for this ceiling; the arithmetic
2^(29+5) ns is 17.2 s, and recorded fio 3.33 output agrees.)

>>> h = Histogram.from_bins({"99840": 3, "1003520": 1})  # bucket values in ns
>>> h.percentile_ns(50), h.percentile_ns(99), h.samples
(99840, 1003520, 4)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_GROUP_NR = 29  # fio 3.33 default; a fio built with more groups tracks longer tails
PLAT_NR = PLAT_GROUP_NR * PLAT_VAL


def plat_idx_to_val(idx: int) -> int:
    """fio's bucket index → the value (ns) json+ prints for it: the bucket's mean."""
    if not 0 <= idx < PLAT_NR:
        raise ValueError(f"bucket index {idx} outside 0..{PLAT_NR - 1}")
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    return base + int((idx % PLAT_VAL + 0.5) * (1 << error_bits))


def plat_val_to_idx(val: int) -> int:
    """A latency (ns) → fio's bucket index; values past the range land in the last bucket."""
    msb = max(val.bit_length() - 1, 0)
    if msb <= PLAT_BITS:
        return val
    error_bits = msb - PLAT_BITS
    idx = ((error_bits + 1) << PLAT_BITS) + ((PLAT_VAL - 1) & (val >> error_bits))
    return min(idx, PLAT_NR - 1)


def _bucket_floor(idx: int) -> int:
    """Smallest latency (ns) counted in bucket ``idx``."""
    if idx < (PLAT_VAL << 1):
        return idx
    error_bits = (idx >> PLAT_BITS) - 1
    return (1 << (error_bits + PLAT_BITS)) + (idx % PLAT_VAL) * (1 << error_bits)


CEILING_NS = plat_idx_to_val(PLAT_NR - 1)  # 17_112_760_320: what fio reports for the last bucket
CEILING_FLOOR_NS = _bucket_floor(PLAT_NR - 1)  # 17_045_651_456: any slower sample lands there
DEFAULT_PERCENTILES = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)


@dataclass(frozen=True)
class Histogram:
    """Completion-latency bucket counts: ((bucket value ns, count), …) sorted by value."""

    counts: tuple[tuple[int, int], ...] = ()

    @classmethod
    def from_bins(cls, bins: Mapping[str, int]) -> Histogram:
        """Build from json+ ``bins``; every key must be one of fio's bucket values."""
        counts: Counter[int] = Counter()
        for key, count in bins.items():
            value = int(key)
            if plat_idx_to_val(plat_val_to_idx(value)) != value:
                raise ValueError(f"clat_ns bin {key} is not a fio {PLAT_GROUP_NR}-group bucket value")
            counts[value] += int(count)
        return cls(tuple(sorted((v, c) for v, c in counts.items() if c)))

    @classmethod
    def merge(cls, hists: Iterable[Histogram]) -> Histogram:
        """Sum bucket counts: the histogram of all samples of all inputs."""
        total: Counter[int] = Counter()
        for h in hists:
            total.update(dict(h.counts))
        return cls(tuple(sorted(total.items())))

    def __add__(self, other: Histogram) -> Histogram:
        return Histogram.merge((self, other))

    @property
    def samples(self) -> int:
        return sum(c for _, c in self.counts)

    @property
    def ceiling_samples(self) -> int:
        """Samples in fio's open-ended last bucket (true latency ≥ CEILING_FLOOR_NS, unknown)."""
        return dict(self.counts).get(CEILING_NS, 0)

    def percentile_ns(self, p: float) -> int:
        """The p-th percentile as fio computes it (stat.c calc_clat_percentiles).

        The first bucket whose cumulative count reaches p/100 × samples; exact
        rational arithmetic stands in for fio's long double.
        """
        if not 0 < p <= 100:
            raise ValueError(f"percentile must be in (0, 100], got {p}")
        if not self.counts:
            raise ValueError("no latency samples: percentile undefined")
        threshold = Fraction(p) / 100 * self.samples
        cumulative = 0
        for value, count in self.counts:
            cumulative += count
            if cumulative >= threshold:
                return value
        return self.counts[-1][0]
