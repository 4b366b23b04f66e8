"""Judgement: one Check type, bound at plan time, one evaluate path, and the gate-verdict rule.

    check.py      Check (what is judged, its criterion, its reference and any plan-time ruling),
                  Bound (a reference bound at plan time), Ruling (SKIP/INVALID decided before
                  measuring); Inputs (the measurements a check was judged on, as stored) is
                  kvgate.base.criteria's, offered here too
    verdict.py    gate_verdict / gate_outcome: the one rule that turns check verdicts into a gate's
                  verdict, with its coverage of the bound references (GateVerdict, Coverage, Judged)
                  and BASELINE RECORDED; is_baseline: a figure recorded without a threshold;
                  reach: which bound references a plan can judge (preflight, of G3)
    catalogue.py  Plan (a gate's checks from a GateConfig) and ``family``: a plan's checks by rule id,
                  the families gates/ lists

Every gate plans ``Check`` objects (its plan module says *what* is checked) and judges
them with ``Check.evaluate``; the run record stores each check's ``Inputs`` beside its
judgement, so ``kvgate rejudge`` can judge the same measurements again.
"""

from kvgate.judgement.catalogue import Plan, family
from kvgate.judgement.check import Bound, Check, Ruling
from kvgate.judgement.verdict import (
    RECORDED_BASELINE,
    Coverage,
    GateVerdict,
    Judged,
    gate_outcome,
    gate_verdict,
    is_baseline,
    is_figure,
    reach,
)

__all__ = [
    "RECORDED_BASELINE",
    "Bound",
    "Check",
    "Coverage",
    "GateVerdict",
    "Judged",
    "Plan",
    "Ruling",
    "family",
    "gate_outcome",
    "gate_verdict",
    "is_baseline",
    "is_figure",
    "reach",
]
