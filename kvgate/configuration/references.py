"""Published reference figures (R1–R9): load them, judge a site against them, check them.

A gate measures a baseline arm and a candidate arm on the site, computes the
improvement the way the reference states it (ratio, percent gain, percent
reduction) and judges it against the reference's lower bound, read at the precision
the seed wrote it (↓26% is met from 25.5 up):

>>> refs = load_references()
>>> ref = refs.get("R2-ttft-p50-tp8")
>>> m = improvement_measurement(ref, baseline=12.7, candidate=8.7)
>>> judge_reference(ref, m).condition
'ttft_p50_reduction_pct=31.5 ≥ 25.5 (R2: ↓26–32%)'

`check_consistency` recomputes every stated improvement from its own figures and
evaluates the file's cross-checks; what does not add up is reported, not fatal.
The schema itself lives in `kvgate.configuration.reference_schema`.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from kvgate.base.config_file import load_model, repo_root
from kvgate.base.criteria import Criterion, Judgement, Measurement, fmt, judge
from kvgate.configuration.reference_schema import (
    CrossCheck,
    Direction,
    Figure,
    Improvement,
    Kind,
    Reference,
    References,
    parse_expression,
)

DEFAULT_PATH = repo_root() / "gates" / "references.yaml"


def load_references(path: str | Path | None = None) -> References:
    """Load and validate gates/references.yaml (or `path`); errors name the file and field path.

    The shipped file is read once per process; the References are frozen, so sharing them is safe.
    """
    return _shipped() if path is None else _load(Path(path))


@functools.cache
def _shipped() -> References:
    return _load(DEFAULT_PATH)


def _load(p: Path) -> References:
    refs = load_model(p, References)
    refs._path = str(p)
    return refs


def references_used(path: Path = DEFAULT_PATH) -> dict[str, str]:
    """The references file a run is judged with, by path and sha256 (rejudge says when it changed)."""
    return {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


# ---- judging a site against a reference ----------------------------------------------------


def improvement(ref: Reference, *, baseline: float, candidate: float) -> float:
    """The improvement of `candidate` over `baseline`, computed the way `ref` states it.

    >>> improvement(load_references().get("R9-load-time-deepseek-32b"), baseline=691, candidate=112)
    6.169642857142857
    """
    if baseline <= 0 or candidate <= 0:
        raise ValueError(f"{ref.metric}: baseline {baseline!r} and candidate {candidate!r} must be > 0")
    factor = candidate / baseline if ref.direction is Direction.HIGHER else baseline / candidate
    if ref.improvement.kind is Kind.RATIO:
        return factor
    if ref.improvement.kind is Kind.PERCENT_GAIN:
        return (factor - 1) * 100
    return (1 - 1 / factor) * 100


def improvement_measurement(
    ref: Reference, *, baseline: float, candidate: float, evidence: tuple[str, ...] = ()
) -> Measurement:
    """The site's measured improvement (baseline arm → candidate arm) as a Measurement for `ref`."""
    value = improvement(ref, baseline=baseline, candidate=candidate)
    unit = "x" if ref.improvement.kind is Kind.RATIO else "%"
    return Measurement(ref.improvement_metric, value, unit, evidence)


def criterion_for(ref: Reference, *, threshold_fraction: float = 1.0, tolerance: float = 0.0) -> Criterion:
    """A criterion: the measured improvement ≥ the reference's lower bound × threshold_fraction.

    The lower bound is read at the precision the seed wrote it, as `check_reference` reads
    the seed's own figures: "4.1×" is met by anything that rounds to 4.1, i.e. ≥ 4.05. So
    the seed's platform meets its own references (R1's 37.97 s → 9.30 s is 4.08×).

    >>> criterion_for(load_references().get("R1-cold-read-ttft-conc16"), threshold_fraction=0.5).expected
    2.025
    """
    if threshold_fraction <= 0 or tolerance < 0:
        raise ValueError(
            f"need threshold_fraction > 0 and tolerance ≥ 0, got {threshold_fraction}, {tolerance}"
        )
    return Criterion(
        rule=ref.id,
        metric=ref.improvement_metric,
        comparator=">=",
        expected=(ref.improvement.low - ref.improvement.half_units()[0]) * threshold_fraction,
        tolerance=tolerance,
        source=f"{ref.report} ({ref.source.document})",
    )


def judge_reference(
    ref: Reference, measured: Measurement | None, *, threshold_fraction: float = 1.0, tolerance: float = 0.0
) -> Judgement:
    """Judge a measured improvement against `ref`; the condition ends with `(R2: ↓26–32%)`."""
    c = criterion_for(ref, threshold_fraction=threshold_fraction, tolerance=tolerance)
    if measured is not None and measured.metric != c.metric:
        raise ValueError(f"{ref.id} judges {c.metric!r}, got a measurement of {measured.metric!r}")
    j = judge(c, measured)
    scale = "" if threshold_fraction == 1 else f"{threshold_fraction:g} × "
    return replace(j, condition=f"{j.condition} ({scale}{ref.annotation})")


FAR_ABOVE = 2.0  # a speed-up more than twice the seed's upper end's is "far above" it


def speed_factor(kind: Kind, value: float) -> float:
    """An improvement as a speed factor, so the kinds compare: 2× → 2, +40% → 1.4, ↓50% → 2.

    >>> speed_factor(Kind.PERCENT_REDUCTION, 50.0), speed_factor(Kind.PERCENT_GAIN, 40.0)
    (2.0, 1.4)
    """
    if kind is Kind.RATIO:
        return value
    if kind is Kind.PERCENT_GAIN:
        return 1 + value / 100
    return 1 / (1 - value / 100) if value < 100 else float("inf")


def seed_position(ref: Reference, value: float) -> str:
    """Where a measured improvement lands against the seed's stated figure or range.

    Below, inside (within the rounding of the stated ends) or above it; "far above" when
    the speed-up is more than FAR_ABOVE times the one at the seed's upper end, which asks
    whether the baseline arm was the seed's.

    >>> ref = load_references().get("R2-ttft-p50-tp8")
    >>> seed_position(ref, 29.0), seed_position(ref, 20.0)
    ("inside the seed's ↓26–32%", "below the seed's ↓26–32%")
    >>> seed_position(ref, 80.0)
    "far above the seed's ↓26–32% (3.4× the speed-up at its upper end): was the baseline arm the seed's?"
    """
    return improvement_position(ref.improvement, value)


def improvement_position(imp: Improvement, value: float) -> str:
    """:func:`seed_position` from the stated improvement alone (what a run record keeps of it)."""
    lo_tol, hi_tol = imp.half_units()
    stated = f"the seed's {imp.stated}"
    if value < imp.low - lo_tol:
        return f"below {stated}"
    if value <= imp.high + hi_tol:
        return f"inside {stated}"
    times = speed_factor(imp.kind, value) / speed_factor(imp.kind, imp.high)
    if times > FAR_ABOVE:
        why = "was the baseline arm the seed's?"
        return f"far above {stated} ({times:.1f}× the speed-up at its upper end): {why}"
    return f"above {stated}"


# ---- do the published figures agree with themselves? ---------------------------------------

Severity = Literal["mismatch", "unsupported"]


@dataclass(frozen=True)
class Disagreement:
    """Where the seed's figures do not add up.

    mismatch: the figures contradict the stated improvement or a cross-check.
    unsupported: consistent, but a stated bound is reproduced by no published figure.
    """

    subject: str  # reference or cross-check id
    severity: Severity
    message: str  # with the numbers
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.subject} ({self.severity}): {self.message}"


@dataclass(frozen=True)
class Recomputed:
    """One published (baseline, candidate) pair and the improvement it gives."""

    baseline: float
    candidate: float
    value: float
    text: str  # "10.17 → 7.53 s gives ↓26.0%"


def show_improvement(kind: Kind, value: float) -> str:
    """12.6×, +96.3%, ↓26.0% — the way the seed writes them; a loss the other way round.

    >>> show_improvement(Kind.PERCENT_REDUCTION, -35.7), show_improvement(Kind.PERCENT_GAIN, -6.0)
    ('↑35.7%', '−6.0%')
    """
    if kind is Kind.RATIO:
        return f"{value:.3g}×"
    if kind is Kind.PERCENT_GAIN:
        return f"+{value:.1f}%" if value >= 0 else f"−{-value:.1f}%"
    return f"↓{value:.1f}%" if value >= 0 else f"↑{-value:.1f}%"


def show_bound(kind: Kind, bound: float) -> str:
    """A stated bound as the seed writes it: 8.6×, +36%, ↓32%."""
    if kind is Kind.RATIO:
        return f"{bound:g}×"
    return f"+{bound:g}%" if kind is Kind.PERCENT_GAIN else f"↓{bound:g}%"


def recompute(ref: Reference) -> list[Recomputed]:
    """The improvement each published pair gives; range ends pair low↔low and high↔high."""
    b, c = ref.baseline, ref.candidate
    if b is None or c is None:
        return []
    pairs = [(b.low, c.low), (b.high, c.high)] if b.is_range else [(b.low, c.low)]
    out = []
    for base, cand in pairs:
        value = improvement(ref, baseline=base, candidate=cand)
        text = f"{fmt(base)} → {fmt(cand)} {ref.unit} gives {show_improvement(ref.improvement.kind, value)}"
        out.append(Recomputed(base, cand, value, text))
    return out


def check_reference(ref: Reference) -> Disagreement | None:
    """Compare the stated improvement with the one recomputed from the row's own figures."""
    found = recompute(ref)
    if not found:
        return None
    imp = ref.improvement
    lo_tol, hi_tol = imp.half_units()
    shown = "; ".join(r.text for r in found) + (" (range ends paired)" if len(found) > 1 else "")
    if any(not imp.low - lo_tol <= r.value <= imp.high + hi_tol for r in found):
        return Disagreement(ref.id, "mismatch", f"stated {imp.stated}, but {shown}")
    bounds = ((imp.low, lo_tol), (imp.high, hi_tol)) if imp.low != imp.high else ()
    missing = [b for b, tol in bounds if not any(abs(r.value - b) <= tol for r in found)]
    if not missing:
        return None
    unreached = " and ".join(show_bound(imp.kind, b) for b in missing)
    why = f"stated {imp.stated}; {shown}: inside the range, but no published figure reproduces {unreached}"
    return Disagreement(ref.id, "unsupported", why, ref.note or "")


_OPS: dict[type[ast.operator], tuple[str, int, Callable[[float, float], float]]] = {
    ast.Add: ("+", 1, operator.add),
    ast.Sub: ("−", 1, operator.sub),
    ast.Mult: ("×", 2, operator.mul),
    ast.Div: ("/", 2, operator.truediv),
}


def _evaluate(node: ast.AST, figures: dict[str, Figure]) -> tuple[float, str, int]:
    """(value, text with the figures' numbers and units, precedence) of an expression node."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, figures)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value), fmt(node.value), 3
    if isinstance(node, ast.Name):
        f = figures[node.id]
        return f.value, f"{fmt(f.value)} {f.unit}".strip(), 3
    if isinstance(node, ast.UnaryOp):
        value, text, _ = _evaluate(node.operand, figures)
        return -value, f"−{text}", 3
    assert isinstance(node, ast.BinOp), "parse_expression admits nothing else"
    symbol, prec, fn = _OPS[type(node.op)]
    lv, lt, lp = _evaluate(node.left, figures)
    rv, rt, rp = _evaluate(node.right, figures)
    lt = f"({lt})" if lp < prec else lt
    rt = f"({rt})" if rp <= prec and rp < 3 else rt
    return fn(lv, rv), f"{lt} {symbol} {rt}", prec


@dataclass(frozen=True)
class CrossCheckResult:
    """One cross-check evaluated: both sides with their numbers, and whether they agree."""

    check: CrossCheck
    left: float
    right: float
    ok: bool
    condition: str  # "65.6 GB / 178 s = 0.3685 GB/s vs 3.26 GB/s: -88.7% (allowed ±2%)"


def _side(text: str, value: float, unit: str) -> str:
    result = f"{fmt(value)} {unit}".strip()
    return result if text == result else f"{text} = {result}"


def evaluate_cross_check(refs: References, check: CrossCheck) -> CrossCheckResult:
    """Evaluate both sides of a cross-check from the named figures and compare them."""
    figures = {name: refs.figure(path) for name, path in check.figures.items()}
    try:
        lv, lt, _ = _evaluate(parse_expression(check.left), figures)
        rv, rt, _ = _evaluate(parse_expression(check.right), figures)
    except ZeroDivisionError:
        return CrossCheckResult(check, float("nan"), float("nan"), False, "division by zero")
    left, right, tol = _side(lt, lv, check.unit), _side(rt, rv, check.unit), check.rel_tolerance
    if check.compare == "approx":
        off = (lv - rv) / rv if rv else float("inf")
        ok = abs(lv - rv) <= tol * abs(rv)
        return CrossCheckResult(check, lv, rv, ok, f"{left} vs {right}: {off:+.1%} (allowed ±{tol:.0%})")
    allowance = f" (+{tol:.0%})" if tol else ""
    if check.compare == "<=":
        return CrossCheckResult(check, lv, rv, lv <= rv * (1 + tol), f"{left} ≤ {right}{allowance}")
    return CrossCheckResult(check, lv, rv, lv >= rv * (1 - tol), f"{left} ≥ {right}{allowance}")


def evaluate_cross_checks(refs: References) -> list[CrossCheckResult]:
    """Every cross-check of the file, agreeing or not (the report shows them all)."""
    return [evaluate_cross_check(refs, c) for c in refs.cross_checks]


def check_consistency(refs: References) -> list[Disagreement]:
    """Every place the published figures do not add up: improvements, then cross-checks."""
    found = [d for ref in refs.references if (d := check_reference(ref)) is not None]
    for r in evaluate_cross_checks(refs):
        if not r.ok:
            found.append(
                Disagreement(r.check.id, "mismatch", f"{r.check.claim}: {r.condition}", r.check.reason)
            )
    return found


__all__ = [
    "DEFAULT_PATH",
    "CrossCheckResult",
    "Disagreement",
    "Recomputed",
    "Reference",
    "References",
    "check_consistency",
    "check_reference",
    "criterion_for",
    "evaluate_cross_checks",
    "improvement",
    "improvement_measurement",
    "judge_reference",
    "load_references",
    "recompute",
    "seed_position",
    "speed_factor",
]
