"""From the soak's windows to the numbers G4 judges: errors, drift, memory, capacity, hits, canary.

Pure functions over the ``window`` records the agent wrote (kvgate.probes.agent.soak). The hit
ratio compares the first ``baseline_windows`` after ``warmup_windows`` with the last
``baseline_windows``, by their medians; RSS, TTFT, throughput and the tier are judged as slopes
(drift.py). Too few windows to compare is INVALID with the count, never PASS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.probes.agent import hit_ratio
from kvgate.probes.loadgen import Output, TokenLogprob, compare_outputs, median

Window = dict[str, Any]
ENDINGS = ("duration", "engine-died", "cancelled")  # how a soak ends; anything else: its agent broke


@dataclass(frozen=True)
class Soak:
    """One deployment's soak: its windows (by index) and what the judge needs besides them."""

    windows: tuple[Window, ...]
    duration_s: int
    engines: int
    cap_bytes: int | None  # the tiers' configured capacity, summed; None: no external tier
    evidence: tuple[str, ...] = ()
    ended: str = ""  # the agent's own word: duration | engine-died | cancelled | failed


def _m(metric: str, value: Any, unit: str, soak: Soak, invalid: str | None = None) -> Measurement:
    return Measurement(metric, value, unit, soak.evidence, invalid)


def coverage(soak: Soak) -> Measurement:
    """The windows' span over the planned duration (an early end or a stall shows here)."""
    w = soak.windows
    if not w:
        return _m("soak_coverage_ratio", None, "x", soak, "the soak produced no window")
    span = w[-1]["end_unix_s"] - w[0]["start_unix_s"]
    broken = None if soak.ended in ENDINGS else f"the soak's agent ended {soak.ended or 'without a word'}"
    return _m("soak_coverage_ratio", round(span / soak.duration_s, 4), "x", soak, broken)


def failed_requests(soak: Soak) -> Measurement:
    """Failed load and canary requests over the whole soak."""
    n = sum(int(w["summary"]["failed"] or 0) for w in soak.windows)
    n += sum(1 for w in soak.windows for c in w["canary"] if not c["success"])
    return _m("failed_requests", n if soak.windows else None, "requests", soak, _none(soak))


def empty_responses(soak: Soak) -> Measurement:
    """Successful (HTTP 200) responses that carried no token."""
    n = sum(int(w["empty_responses"]) for w in soak.windows)
    return _m("empty_responses", n if soak.windows else None, "responses", soak, _none(soak))


def engine_deaths(soak: Soak) -> Measurement:
    """Engines found dead after a window (the soak ends at the first)."""
    dead = max((soak.engines - int(w["engines_alive"]) for w in soak.windows), default=0)
    return _m("engines_died", dead if soak.windows else None, "engines", soak, _none(soak))


def canary_mismatches(soak: Soak) -> tuple[Measurement, list[str], list[str]]:
    """Canary outputs of every window against the first window's; (measurement, mismatches, near-ties)."""
    if len(soak.windows) < 2 or not soak.windows[0]["canary"]:
        why = (
            "no canary prompts" if soak.windows and not soak.windows[0]["canary"] else "fewer than 2 windows"
        )
        return _m("canary_mismatches", None, "requests", soak, why), [], []
    first = _outputs(soak.windows[0])
    bad, ties, compared = [], [], 0
    for w in soak.windows[1:]:
        got = _outputs(w)
        compared += len(first.keys() & got.keys())
        found = compare_outputs(first, got, got_name=f"window {w['index']}", expected_name="window 0")
        bad += [f"window {w['index']} canary {m}" for m in found.mismatches]
        ties += [f"window {w['index']} canary {m}" for m in found.near_ties]
    if not compared:  # every canary of window 0 or of the later windows failed: nothing was checked
        return (
            _m("canary_mismatches", None, "requests", soak, "no canary output could be compared"),
            bad,
            ties,
        )
    return _m("canary_mismatches", len(bad), "requests", soak), bad, ties


def _outputs(w: Window) -> dict[str, Output]:
    return {
        str(c["index"]): Output(c["text"], tuple(TokenLogprob(**t) for t in c["logprobs"]))
        for c in w["canary"]
        if c["success"]
    }


def _none(soak: Soak) -> str | None:
    return None if soak.windows else "the soak produced no window"


def trend_windows(soak: Soak, profile: G4Profile) -> tuple[list[Window], list[Window]] | str:
    """(first, last) baseline windows after warm-up, or why there are too few."""
    lim = profile.limits
    usable = list(soak.windows[lim.warmup_windows :])
    if len(usable) < 2 * lim.baseline_windows:
        return (
            f"{len(soak.windows)} window(s), {profile.needed_windows} needed"
            f" (warm-up + first and last {lim.baseline_windows})"
        )
    return usable[: lim.baseline_windows], usable[-lim.baseline_windows :]


def _ratio(
    soak: Soak, profile: G4Profile, metric: str, unit: str, value: Callable[[Window], float | None]
) -> Measurement:
    """median(last) / median(first) of a per-window value."""
    split = trend_windows(soak, profile)
    if isinstance(split, str):
        return _m(metric, None, unit, soak, split)
    first, last = ([v for v in map(value, ws) if v is not None] for ws in split)
    if not first or not last or median(first) <= 0:
        return _m(
            metric, None, unit, soak, f"no usable {metric.rsplit('_', 1)[0]} in the first or last windows"
        )
    return _m(metric, round(median(last) / median(first), 4), unit, soak)


def hit_retention(soak: Soak, profile: G4Profile) -> Measurement:
    """Hit ratio retained from the first windows to the last; zero hits at the start is INVALID."""
    m = _ratio(soak, profile, "hit_ratio_retention", "x", hit_ratio)
    split = trend_windows(soak, profile)
    if m.value is None and not isinstance(split, str):
        unread = [w for ws in split for w in ws if w["hit_tokens"] is None]
        errors = [e for w in unread for e in w.get("metrics_errors") or []]
        unsized = [w for ws in split for w in ws if w["hit_tokens"] and hit_ratio(w) is None]
        why = (
            f"the hit counter could not be read in {len(unread)} window(s)"
            + (
                f": {errors[0][:200]}"
                if errors
                else " (counter missing, or it went back: an engine restarted)"
            )
            if unread
            else f"{len(unsized)} window(s) served tokens from cache, but neither the responses nor the "
            "engines' logs said how many prompt tokens they had"
            if unsized
            else "the engines served no prompt token from cache: the tier was never read"
        )
        return _m(m.metric, None, "x", soak, why)
    return m


def cache_peak(soak: Soak) -> Measurement:
    """The tiers' largest size in any window over their configured capacity."""
    sizes = [w["cache_dir_bytes"] for w in soak.windows if w["cache_dir_bytes"] is not None]
    if soak.cap_bytes is None or not sizes:
        return _m("cache_peak_ratio", None, "x", soak, "no tier size was sampled (no tier directory)")
    if max(sizes) == 0:
        return _m("cache_peak_ratio", 0.0, "x", soak, "the tier directory stayed empty: nothing was written")
    return _m("cache_peak_ratio", round(max(sizes) / soak.cap_bytes, 6), "x", soak)
