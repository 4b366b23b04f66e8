"""The gate-verdict rule, in one place: the store's outcome and the report both use it.

>>> from kvgate.base.criteria import Verdict
>>> gate_verdict([Verdict.PASS, Verdict.SKIP])
<Verdict.PASS: 'PASS'>
>>> gate_verdict([Verdict.PASS, None])  # a planned check without a verdict
<Verdict.ERROR: 'ERROR'>
"""

from __future__ import annotations

from collections.abc import Iterable

from kvgate.base.criteria import Verdict, worst


def gate_verdict(verdicts: Iterable[Verdict | None]) -> Verdict:
    """The worst evaluated verdict; a check not evaluated (None) turns a passing verdict into ERROR.

    No check at all is ERROR too: not evaluated is never PASS.
    """
    given = list(verdicts)
    verdict = worst([v for v in given if v is not None])
    if None in given and verdict.gate_ok:
        return Verdict.ERROR
    return verdict
