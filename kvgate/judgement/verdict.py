"""The gate-verdict rule, in one place: the store's outcome, the CLI, JUnit, history and the report use it.

A gate's verdict is the worst of its checks, and it carries its coverage: how many of the
references its profile binds it judged (DESIGN rule 6). A gate that judged fewer reads
"PASS — limited coverage: 1 of 12 references", and one that judged none of them reads "NO
REFERENCE JUDGED", never PASS; one whose every figure was recorded as the site's baseline, none
judged against a specification, reads "BASELINE RECORDED".

>>> from kvgate.base.criteria import Verdict
>>> gate_verdict([Verdict.PASS, Verdict.SKIP])
<Verdict.PASS: 'PASS'>
>>> gate_verdict([Verdict.PASS, None])  # a planned check without a verdict
<Verdict.ERROR: 'ERROR'>
>>> judged = [Judged(Verdict.PASS, "R2-a"), Judged(Verdict.SKIP, "R2-b", why="no arms")]
>>> gate_outcome(judged, ["R2-a", "R2-b"]).text
'PASS — limited coverage: 1 of 2 references'
>>> gate_outcome([Judged(Verdict.PASS, "engines-up"), judged[1]], ["R2-a", "R2-b"]).text
'NO REFERENCE JUDGED — limited coverage: 0 of 2 references'
>>> gate_outcome([Judged(Verdict.PASS)], g3_reach=Coverage(("R2-a",), {"R2-a": "no arms"})).text
'NO REFERENCE REACHABLE — G3 can judge 0 of 1 references'
>>> gate_outcome([Judged(Verdict.PASS)], g3_reach=Coverage(("R2-a", "R2-b"), {"R2-a": "no arms"})).text
'READY WITH GAPS — G3 can judge 1 of 2 references'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kvgate.base.criteria import Verdict, worst
from kvgate.judgement.check import Check

# The source of a criterion that has no threshold: the figure is recorded as the site's baseline.
RECORDED_BASELINE = "no site threshold: measured as the site baseline"
# Verdicts that say a check was judged against its criterion (a waiver follows a judgement).
JUDGED = (Verdict.PASS, Verdict.FAIL, Verdict.WAIVED)
BASELINE_RECORDED = "BASELINE RECORDED"
NO_REFERENCE_JUDGED = "NO REFERENCE JUDGED"  # a passing gate that judged none of the references it binds
SHORT_SOAK = "SHORT SOAK"  # a passing G4 whose soak was too short to judge any drift
READY_WITH_GAPS = "READY WITH GAPS"  # a passing preflight whose inventory keeps G3 from judging a reference
# a passing preflight whose inventory keeps G3 from judging any (two readers found "READY" over "0 of 12")
NO_REFERENCE_REACHABLE = "NO REFERENCE REACHABLE"


def gate_verdict(verdicts: Iterable[Verdict | None]) -> Verdict:
    """The worst evaluated verdict; a check not evaluated (None) turns a passing verdict into ERROR.

    No check at all is ERROR too: not evaluated is never PASS.
    """
    given = list(verdicts)
    verdict = worst([v for v in given if v is not None])
    if None in given and verdict.gate_ok:
        return Verdict.ERROR
    return verdict


def is_baseline(*, comparator: str, expected: object, unit: str, source: str) -> bool:
    """A figure recorded without a threshold (G2's "> 0 B/s"): a baseline, never a PASS of a specification."""
    trivial = comparator in (">", ">=") and expected in (0, 0.0) and not isinstance(expected, bool)
    return RECORDED_BASELINE in source or (trivial and is_figure(unit))


def is_figure(unit: str) -> bool:
    """A measured quantity of the system (B/s, IOPS, s), not a count of hosts or a ratio-free flag."""
    return unit not in ("", "hosts")


@dataclass(frozen=True)
class Judged:
    """What the gate-verdict rule reads of one check: its verdict, its rule, what it was held to.

    ``baseline``: recorded without a threshold; ``figure``: a measured quantity with a unit;
    ``why``: the check's condition, said for a reference it could not judge.
    """

    verdict: Verdict | None
    rule: str = ""
    baseline: bool = False
    figure: bool = False
    why: str = ""


@dataclass(frozen=True)
class Coverage:
    """How many of the references a gate's profile binds it judged, and why each other was not."""

    bound: tuple[str, ...] = ()
    unjudged: dict[str, str] = field(default_factory=dict)  # reference → why not judged
    noun: str = "references"  # what is bound: G3's references, G1's hardware families

    @property
    def judged(self) -> tuple[str, ...]:
        return tuple(r for r in self.bound if r not in self.unjudged)

    @property
    def limited(self) -> bool:
        return bool(self.unjudged)

    @property
    def text(self) -> str:
        """'1 of 12 references'; '' when the profile binds none."""
        return f"{len(self.judged)} of {len(self.bound)} {self.noun}" if self.bound else ""


@dataclass(frozen=True)
class GateVerdict:
    """A gate's verdict with its coverage: what the run record's outcome, every report and JUnit say."""

    verdict: Verdict
    coverage: Coverage = Coverage()
    baseline_only: bool = False  # every figure recorded as a baseline, none judged against a threshold
    short_soak: str = ""  # G4: why its soak was too short to judge drift (its profile's own words)
    g3_reach: Coverage | None = None  # preflight: which of G3's references this inventory lets G3 judge

    @property
    def gate_ok(self) -> bool:
        """Whether the next gate may open: a recorded baseline opens G3 as a PASS does."""
        return self.verdict.gate_ok and self.verdict is not Verdict.ERROR

    @property
    def label(self) -> str:
        """The verdict's word: BASELINE RECORDED for a PASS that judged no figure, NO REFERENCE JUDGED
        for a PASS that judged none of the references it binds, SHORT SOAK for a passing G4 too short
        to judge drift, READY WITH GAPS for a passing preflight of an inventory that keeps G3 from
        judging some of its references (NO REFERENCE REACHABLE: all of them), else the verdict."""
        if self.baseline_only:
            return BASELINE_RECORDED
        if (
            self.verdict is Verdict.PASS
            and self.coverage.bound
            and not self.coverage.judged
            and self.coverage.noun == "references"
        ):
            return NO_REFERENCE_JUDGED
        if self.verdict is Verdict.PASS and self.short_soak:
            return SHORT_SOAK
        if self.verdict is Verdict.PASS and self.g3_reach is not None and self.g3_reach.limited:
            return READY_WITH_GAPS if self.g3_reach.judged else NO_REFERENCE_REACHABLE
        return self.verdict.value

    @property
    def text(self) -> str:
        """'PASS — limited coverage: 1 of 12 references', 'BASELINE RECORDED', 'FAIL',
        'READY WITH GAPS — G3 can judge 0 of 12 references'."""
        if self.coverage.limited:
            return f"{self.label} — limited coverage: {self.coverage.text}"
        if self.label in (READY_WITH_GAPS, NO_REFERENCE_REACHABLE) and self.g3_reach is not None:
            return f"{self.label} — G3 can judge {self.g3_reach.text}"
        return self.label

    def __str__(self) -> str:
        return self.text


def coverage(judged: Iterable[Judged], bound: Iterable[str], noun: str = "references") -> Coverage:
    """Each bound reference judged by at least one check, or the first reason none of its checks was."""
    refs = tuple(dict.fromkeys(bound))
    why: dict[str, str] = {}
    done: set[str] = set()
    for j in judged:
        if j.verdict in JUDGED:
            done.add(j.rule)
        elif j.rule in refs:
            why.setdefault(j.rule, j.why or (j.verdict.value if j.verdict else "not evaluated"))
    missing = {r: why.get(r, "no check of this run holds it") for r in refs if r not in done}
    return Coverage(refs, missing, noun)


def reach(planned: Iterable[Check[Any]], bound: Iterable[str]) -> Coverage:
    """Which bound references a gate's plan can judge: each needs one check not ruled out at plan time.

    Preflight says this of G3 before G3 runs: what this inventory lets it judge, and why not the rest.
    """
    refs = tuple(dict.fromkeys(bound))
    why: dict[str, str] = {}
    can: set[str] = set()
    for c in planned:
        if c.ruled is not None:
            why.setdefault(c.rule, c.ruled.reason)
        elif c.bound is not None and not c.bound.comparable and c.bound.far_above is not None:
            why.setdefault(c.rule, f"not comparable at this scale: {c.bound.far_above.reason}")
        else:
            can.add(c.rule)
    # G3 plans a check of every bound reference for each engine deployment: none planned, none declared
    none = "no engine deployment of this inventory serves it (engines:)"
    return Coverage(refs, {r: why.get(r, none) for r in refs if r not in can})


def gate_outcome(
    judged: Iterable[Judged],
    bound: Iterable[str] = (),
    *,
    short_soak: str = "",
    g3_reach: Coverage | None = None,
    noun: str = "references",
) -> GateVerdict:
    """The gate's verdict (gate_verdict) with its coverage of the bound references.

    BASELINE RECORDED: a PASS of a gate that binds no reference and recorded figures as the
    site's baseline without judging any figure against a threshold (G2 without site thresholds).
    """
    given = list(judged)
    verdict = gate_verdict(j.verdict for j in given)
    cover = coverage(given, bound, noun)
    figures = [j for j in given if j.figure and j.verdict in JUDGED]
    recorded = bool(figures) and all(j.baseline for j in figures)
    baseline_only = verdict is Verdict.PASS and not cover.bound and recorded
    return GateVerdict(verdict, cover, baseline_only, short_soak, g3_reach)
