"""Criteria are data; one pure function turns (criterion, measurement) into a verdict.

The condition string it returns is used verbatim in the pytest assertion and in
the report row (ReFrame ``assert_reference``, vLLM SLA ``format_cond``):

>>> c = Criterion(rule="G1-CPU-2", metric="cpu_cores", comparator=">=", expected=64)
>>> judge(c, Measurement("cpu_cores", 32)).condition
'cpu_cores=32 ≥ 64'
>>> judge(c, Measurement("cpu_cores", 32)).verdict
<Verdict.FAIL: 'FAIL'>
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Value = float | int | str | bool | None


class Verdict(StrEnum):
    """Outcome of one check. Only PASS, WAIVED and SKIP let a gate pass."""

    PASS = "PASS"
    FAIL = "FAIL"
    INVALID = "INVALID"  # a precondition failed or the number cannot be trusted
    WAIVED = "WAIVED"  # FAIL/INVALID accepted by a named approver with a reason
    SKIP = "SKIP"  # the inventory declares the check not applicable
    ERROR = "ERROR"  # the lab prevented evaluation (host down, tool crashed): not evaluated

    @property
    def gate_ok(self) -> bool:
        return self in (Verdict.PASS, Verdict.WAIVED, Verdict.SKIP)


# Worst first: a gate's verdict is the worst of its checks. SKIP ranks below PASS, so PASS
# plus SKIP is PASS, while a gate whose every check was declared not applicable stays SKIP.
SEVERITY = (Verdict.FAIL, Verdict.ERROR, Verdict.INVALID, Verdict.WAIVED, Verdict.PASS, Verdict.SKIP)


def worst(verdicts: list[Verdict]) -> Verdict:
    """The gate verdict: the most severe check verdict; no checks at all is ERROR."""
    if not verdicts:
        return Verdict.ERROR
    return min(verdicts, key=SEVERITY.index)


@dataclass(frozen=True)
class Measurement:
    """A measured value with its unit and the artifacts that prove it."""

    metric: str
    value: Value
    unit: str = ""
    evidence: tuple[str, ...] = ()
    invalid_reason: str | None = None  # set when the value exists but cannot be trusted


@dataclass(frozen=True)
class Inputs:
    """What one check was judged on, as the run record stores it so the check can be judged again.

    ``measured``: the measurements by the key the check reads (its own, and e.g. each level's);
    ``detail``: said when the verdict is not PASS (the first mismatch, the first error);
    ``said``: said beside any verdict (numbers measured and shown, not judged);
    ``blocked``: measured, but not evaluable (both volumes on one device): the check's policy verdict.
    """

    measured: Mapping[str, Measurement] = field(default_factory=dict)
    detail: str = ""
    said: tuple[str, ...] = ()
    blocked: str = ""


@dataclass(frozen=True)
class Criterion:
    """What a measurement must satisfy, and where that expectation came from."""

    rule: str
    metric: str
    comparator: str
    expected: Any
    unit: str = ""
    tolerance: float = 0.0  # relative: ">=" accepts expected × (1 − tolerance)
    source: str = ""


@dataclass(frozen=True)
class Judgement:
    """The verdict of one criterion on one measurement, with its readable condition."""

    verdict: Verdict
    condition: str
    criterion: Criterion
    measurement: Measurement | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    inputs: Inputs | None = None  # what it was judged on (kvgate.judgement.Check.evaluate sets it)


def _version(text: object) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", str(text))[:4])


def _num(v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(v)
    return float(v)


_COMPARE: dict[str, tuple[str, Callable[[Any, Any, float], bool]]] = {
    "==": ("=", lambda m, e, t: m == e if t == 0 else abs(_num(m) - _num(e)) <= t * abs(_num(e))),
    "!=": ("≠", lambda m, e, t: m != e),
    ">=": ("≥", lambda m, e, t: _num(m) >= _num(e) * (1 - t)),
    "<=": ("≤", lambda m, e, t: _num(m) <= _num(e) * (1 + t)),
    ">": (">", lambda m, e, t: _num(m) > _num(e)),
    "<": ("<", lambda m, e, t: _num(m) < _num(e)),
    "matches": ("matches", lambda m, e, t: re.search(str(e), str(m)) is not None),
    "in": ("in", lambda m, e, t: m in e),
    "version>=": ("≥", lambda m, e, t: _version(m) >= _version(e)),
    "version==": ("=", lambda m, e, t: _version(m) == _version(e)),
}
COMPARATORS = tuple(_COMPARE)


def symbol(comparator: str) -> str:
    """How a comparator reads in conditions and reports: '>=' → '≥'."""
    return _COMPARE[comparator][0] if comparator in _COMPARE else comparator


def fmt(value: object) -> str:
    """Compact, stable rendering of a value for condition strings."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    return str(value)


def condition(c: Criterion, measured: Value) -> str:
    """`metric=measured OP expected`, with unit and tolerance spelled out."""
    sym = symbol(c.comparator)
    unit = f" {c.unit}" if c.unit else ""
    tol = f" (±{c.tolerance:.0%})" if c.tolerance else ""
    quoted = f"/{c.expected}/" if c.comparator == "matches" else fmt(c.expected)
    return f"{c.metric}={fmt(measured)}{unit} {sym} {quoted}{unit}{tol}"


def judge(c: Criterion, m: Measurement | None) -> Judgement:
    """Judge one measurement against one criterion; never PASS without a value."""
    if c.comparator not in _COMPARE:
        raise ValueError(f"unknown comparator {c.comparator!r}; expected one of {COMPARATORS}")
    if m is None or m.value is None:
        why = m.invalid_reason if m and m.invalid_reason else "not measured"
        return Judgement(Verdict.INVALID, f"{c.metric}: {why}", c, m)
    text = condition(c, m.value)
    if m.invalid_reason:
        return Judgement(Verdict.INVALID, f"{text} — untrusted: {m.invalid_reason}", c, m)
    try:
        ok = _COMPARE[c.comparator][1](m.value, c.expected, c.tolerance)
    except (TypeError, ValueError, re.error) as exc:
        return Judgement(Verdict.INVALID, f"{text} — cannot compare: {exc!r}", c, m)
    return Judgement(Verdict.PASS if ok else Verdict.FAIL, text, c, m)


def skipped(c: Criterion, reason: str) -> Judgement:
    """A check the inventory declares not applicable."""
    return Judgement(Verdict.SKIP, f"{c.metric}: not applicable — {reason}", c)
