"""G3 measurements from the arms: write-through, cold proof, correctness and the reference comparisons.

Each function turns what the protocol measured into one `Measurement` for one
check. A number that cannot be trusted carries its reason (``invalid_reason``),
so the judge makes it INVALID — never PASS — and the report shows the numbers.

>>> from kvgate.orchestration.g3.arms import Outcome, Trial, Window
>>> from kvgate.configuration.gate_profiles.g3 import ColdBounds
>>> w = Window("vda", device_read_bytes=10, engine_read_bytes=1000, hit_tokens=10, caches_dropped=True)
>>> t = Trial("ssd-restore", 0, "s", Outcome(0.1, 0.2, "x"), 10, w, predicted_bytes=1000)
>>> m = cold_proof_measurement([t], ColdBounds())
>>> m.value, m.invalid_reason
(0.01, 'trial 0: not cold: vda read 10 B of the 1000 B the restore needed (1% < 90%)')
"""

from __future__ import annotations

from dataclasses import replace

from kvgate.base.criteria import Measurement
from kvgate.configuration.gate_profiles import ColdBounds, VerdictBinding, WriteThrough
from kvgate.configuration.references import Reference, improvement_measurement
from kvgate.orchestration.g3.arms import Trial
from kvgate.orchestration.g3.load_arms import LoadTrial, level_key
from kvgate.orchestration.g3.window import restore_reason
from kvgate.probes.evidence import Counts
from kvgate.record import ArmFigures


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


def arm_reasons(arm: ArmFigures | None, name: str, max_cv: float | None) -> list[str]:
    """Why an arm's headline numbers cannot be trusted: failed/invalid trials, too few, CV too high."""
    if arm is None or arm.completed == 0:
        return [f"arm {name}: no successful request"]
    out = [f"{name} {r}" for r in arm.invalid_reasons]
    if max_cv is not None and arm.ttft_cv is not None and arm.ttft_cv > max_cv:
        out.append(f"{name} TTFT CV {arm.ttft_cv:.2f} > {max_cv:g} over {arm.completed} trials")
    return out


def reference_measurements(
    ref: Reference, binding: VerdictBinding, arms: dict[str, ArmFigures], *, max_cv: float | None
) -> dict[str, Measurement]:
    """The binding's measurement under its check's name; over several levels, the least improvement
    (every level must meet the reference), each level's also kept as ``<check>@c<C>``.

    >>> from kvgate.configuration.references import load_references
    >>> from kvgate.configuration.gate_profiles.g3 import VerdictBinding
    >>> b = VerdictBinding(check="t", reference="R2-ttft-p50-tp8", statistic="ttft_p50_s",
    ...                    baseline_arm="dram-only", candidate_arm="ssd-tier", concurrency=(4, 8))
    >>> def arm(name, ttft):
    ...     unmeasured = dict.fromkeys(ArmFigures.model_fields.keys() - {"invalid_reasons", "qualifications"})
    ...     measured = dict(arm=name, trials=3, completed=3, ttft_p50_s=ttft, ttft_cv=0.0)
    ...     return ArmFigures(**unmeasured | measured)
    >>> arms = {"dram-only@c4": arm("dram-only@c4", 10.0), "ssd-tier@c4": arm("ssd-tier@c4", 5.0),
    ...         "dram-only@c8": arm("dram-only@c8", 10.0), "ssd-tier@c8": arm("ssd-tier@c8", 7.0)}
    >>> {k: round(m.value, 1) for k, m in reference_measurements(load_references().get(b.reference), b, arms,
    ...                                                           max_cv=None).items()}
    {'t': 30.0, 't@c4': 50.0, 't@c8': 30.0}
    """
    if len(binding.levels) < 2:
        return {binding.check: reference_measurement(ref, binding, arms, max_cv=max_cv)}
    each = {
        f"{binding.check}@c{c}": reference_measurement(ref, binding, arms, max_cv=max_cv, concurrency=c)
        for c in binding.levels
    }
    values = [m.value for m in each.values() if isinstance(m.value, int | float)]
    reasons = [f"c{k.rsplit('@c', 1)[1]}: {m.invalid_reason}" for k, m in each.items() if m.invalid_reason]
    if len(values) < len(each):
        least = Measurement(
            ref.improvement_metric, None, "", (), _join(reasons) or "a level was not measured"
        )
    else:
        least = replace(min(each.values(), key=lambda m: float(m.value or 0)), invalid_reason=_join(reasons))
    return {binding.check: least, **each}


def reference_measurement(
    ref: Reference,
    binding: VerdictBinding,
    arms: dict[str, ArmFigures],
    *,
    max_cv: float | None,
    concurrency: int | str | None = None,
) -> Measurement:
    """The improvement of the candidate arm over the baseline arm, computed the way `ref` states it.

    ``concurrency``: the level to read (default: the binding's single level, or the engine's own).
    """
    c = binding.concurrency if concurrency is None else concurrency
    c = c[0] if isinstance(c, tuple) else c
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
