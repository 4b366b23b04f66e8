"""G3 measurements from the arms: write-through, cold proof, correctness and the reference comparisons.

Each function turns what the protocol measured into one `Measurement` for one
check. A number that cannot be trusted carries its reason (``invalid_reason``),
so the judge makes it INVALID — never PASS — and the report shows the numbers.

>>> from kvgate.g3.arms import Outcome, Trial, Window
>>> from kvgate.g3.profile import ColdBounds
>>> w = Window("vda", device_read_bytes=10, engine_read_bytes=1000, hit_tokens=10, caches_dropped=True)
>>> t = Trial("ssd-restore", 0, "s", Outcome(0.1, 0.2, "x"), 10, w, predicted_bytes=1000)
>>> m = cold_proof_measurement([t], ColdBounds())
>>> m.value, m.invalid_reason
(0.01, 'trial 0: not cold: vda read 10 B of the 1000 B the restore needed (1% < 90%)')
"""

from __future__ import annotations

from dataclasses import replace

from kvgate.evidence.window import Counts
from kvgate.g3.arms import ArmSummary, Trial
from kvgate.g3.load_arms import LoadTrial, level_key
from kvgate.g3.profile import ColdBounds, VerdictBinding, WriteThrough
from kvgate.g3.window import restore_reason
from kvgate.judge import Measurement
from kvgate.references import Reference, improvement_measurement


def _join(reasons: list[str]) -> str | None:
    return "; ".join(reasons) or None


def _evidence(trials: list[Trial]) -> tuple[str, ...]:
    return tuple(e for t in trials for e in t.evidence)


def write_through_measurement(trials: list[Trial], bounds: WriteThrough) -> Measurement:
    """The smallest tier-directory growth / predicted state bytes over the populated trials."""
    ratios, reasons = [], []
    for t in trials:
        if t.cache_growth_bytes is None or not t.predicted_bytes:
            reasons.append(f"trial {t.index}: growth or prediction missing (prompt tokens not counted?)")
            continue
        ratio = t.cache_growth_bytes / t.predicted_bytes
        ratios.append(ratio)
        if ratio > bounds.max_ratio:
            reasons.append(f"trial {t.index}: grew {ratio:.2f}× the prediction: something else wrote there")
    value = min(ratios) if ratios else None
    return Measurement("cache_growth_ratio", value, "x", _evidence(trials), _join(reasons))


def cold_proof_measurement(trials: list[Trial], bounds: ColdBounds) -> Measurement:
    """The smallest min(device, engine) read bytes / predicted over the restores, with every reason."""
    ratios, reasons = [], []
    for t in trials:
        w = t.window
        if w is None or not t.predicted_bytes:
            reasons.append(f"trial {t.index}: no counters around the restore")
            continue
        seen = [b for b in (w.device_read_bytes, w.engine_read_bytes) if b is not None]
        ratios.append(min(seen) / t.predicted_bytes if seen else 0.0)
        counts = Counts(w.device_read_bytes, None, w.engine_read_bytes, counted_on=w.device or "?")
        why = restore_reason(
            bounds,
            counts,
            predicted_bytes=t.predicted_bytes,
            prompt_tokens=t.prompt_tokens or 0,
            hit_tokens=w.hit_tokens,
            caches_dropped=w.caches_dropped,
        )
        if why:
            reasons.append(f"trial {t.index}: {why}")
    value = min(ratios) if ratios else None
    return Measurement("restore_read_ratio", value, "x", _evidence(trials), _join(reasons))


def correctness_measurement(
    mismatches: list[str], compared: int, evidence: tuple[str, ...] = ()
) -> Measurement:
    """How many restored/warm greedy outputs differ from recompute's (must be 0)."""
    if compared == 0:
        return Measurement("output_mismatches", None, "requests", evidence, "no restored output to compare")
    return Measurement("output_mismatches", len(mismatches), "requests", evidence)


def arm_reasons(arm: ArmSummary | None, name: str, max_cv: float | None) -> list[str]:
    """Why an arm's headline numbers cannot be trusted: failed/invalid trials, too few, CV too high."""
    if arm is None or arm.completed == 0:
        return [f"arm {name}: no successful request"]
    out = [f"{name} {r}" for r in arm.invalid_reasons]
    if max_cv is not None and arm.ttft_cv is not None and arm.ttft_cv > max_cv:
        out.append(f"{name} TTFT CV {arm.ttft_cv:.2f} > {max_cv:g} over {arm.completed} trials")
    return out


def reference_measurement(
    ref: Reference, binding: VerdictBinding, arms: dict[str, ArmSummary], *, max_cv: float | None
) -> Measurement:
    """The improvement of the candidate arm over the baseline arm, computed the way `ref` states it."""
    c = binding.concurrency
    bname, cname = (
        (a if c == "engine" else level_key(a, c)) for a in (binding.baseline_arm, binding.candidate_arm)
    )
    base, cand = arms.get(bname), arms.get(cname)
    reasons = arm_reasons(base, bname, max_cv) + arm_reasons(cand, cname, max_cv)
    b_value = getattr(base, binding.statistic) if base else None
    c_value = getattr(cand, binding.statistic) if cand else None
    if not b_value or not c_value:
        return Measurement(ref.improvement_metric, None, "", (), _join(reasons) or "arm statistic missing")
    m = improvement_measurement(ref, baseline=b_value, candidate=c_value)
    return replace(m, invalid_reason=_join(reasons))


def cache_hits_measurement(trials: dict[str, list[LoadTrial]]) -> Measurement:
    """The smallest hit-counter / prompt-token ratio over the cache-served loads, with every reason.

    Unknown hits are a reason (the claim is unproven); so is a recompute load with hits.
    """
    ratios, reasons = [], []
    for arm, ts in sorted(trials.items()):
        for t in ts:
            where = f"{arm}@c{t.concurrency} trial {t.index}"
            tokens = t.summary.get("total_input_tokens")
            if arm == "recompute":
                if t.hit_tokens:
                    reasons.append(f"{where}: {t.hit_tokens} prompt tokens served from cache")
                continue
            if t.hit_tokens is None or not tokens:
                reasons.append(f"{where}: hit counter or prompt tokens unknown")
                continue
            ratios.append(t.hit_tokens / tokens)
    ev = tuple(e for ts in trials.values() for t in ts for e in t.evidence)
    value = min(ratios) if ratios else None
    return Measurement("cache_hit_ratio", value, "x", ev, _join(reasons))
