"""A benchmark's verdict from paired runs: the median pair ratio and its exact interval (issue 27).

A median of a few noisy pair ratios decides nothing by itself: on this machine's shared disk
one benchmark gave 0.783, 0.855 and 1.224 in three runs within 20 minutes. So a target is
"met" only when the whole 95 % interval of the median pair ratio clears it, "not met" only
when the interval lies below it, and otherwise "undecided", with the number of pairs the
observed spread would need. The interval is the distribution-free one from order statistics
(no assumption about the noise): [x₍k₎, x₍n+1−k₎], k the largest with P(Binomial(n, ½) < k) ≤ 2.5 %.

>>> v = judge_pairs([1.02, 0.99, 1.05, 1.01, 1.03, 1.00, 1.04, 0.98], target=0.95)
>>> v.verdict, v.low, v.high
('met', 0.98, 1.05)
>>> v = judge_pairs([0.65, 1.57, 1.2, 1.1, 0.9, 1.3, 1.15, 1.05], target=0.98)  # spread as seen here
>>> v.verdict, v.pairs_needed
('undecided', 10)
>>> judge_pairs([1.0] * 5, target=0.9).verdict  # fewer than 6 pairs: no 95 % interval at all
'undecided'
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
Z = 1.959964  # two-sided 95 %
MEDIAN_SE = math.sqrt(math.pi / 2)  # the median's standard error over the mean's, for normal noise
MAD_TO_SIGMA = 1.4826  # a robust standard deviation from the median absolute deviation


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The order-statistic interval of the median, or None when there are too few values for it."""
    xs, n = sorted(values), len(values)
    k, below = 0, 0.0
    for j in range(n):
        below += math.comb(n, j) / 2**n  # P(B ≤ j)
        if below > (1 - confidence) / 2:
            break
        k = j + 1
    return (xs[k - 1], xs[n - k]) if k else None


@dataclass(frozen=True)
class PairVerdict:
    """met / not met / undecided for a bound on the median pair value, with what decided it."""

    verdict: str
    median: float
    low: float | None
    high: float | None
    pairs: int
    pairs_needed: int | None  # for an undecided verdict: what the observed spread would need

    def __str__(self) -> str:
        shown = f"median {self.median:.3f}"
        if self.low is not None and self.high is not None:
            shown += f", 95 % interval {self.low:.3f}–{self.high:.3f}"
        shown += f" over {self.pairs} pairs: {self.verdict}"
        if self.verdict == "undecided":
            needed = "more than any budget" if self.pairs_needed is None else f"≈ {self.pairs_needed}"
            shown += f" ({needed} pairs would decide it at this spread)"
        return shown


def judge_pairs(
    values: Sequence[float], *, target: float = -math.inf, at_most: float = math.inf
) -> PairVerdict:
    """The verdict on ``target ≤ median(values) ≤ at_most`` (one value per pair, e.g. its ratio)."""
    median = statistics.median(values)
    low, high = median_interval(values) or (None, None)
    if low is not None and high is not None and low >= target and high <= at_most:
        verdict = "met"
    elif (high is not None and high < target) or (low is not None and low > at_most):
        verdict = "not met"
    else:
        verdict = "undecided"
    needed = pairs_needed(values, min(abs(median - target), abs(median - at_most)))
    return PairVerdict(verdict, median, low, high, len(values), needed if verdict == "undecided" else None)


def pairs_needed(values: Sequence[float], gap: float) -> int | None:
    """Pairs for the median's interval to shrink within ``gap`` at the observed spread (None: never)."""
    middle = statistics.median(values)
    spread = MAD_TO_SIGMA * statistics.median(abs(v - middle) for v in values)
    if gap == 0:
        return None
    return max(6, math.ceil((Z * MEDIAN_SE * spread / gap) ** 2))
