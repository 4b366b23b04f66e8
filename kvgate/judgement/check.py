"""One Check type for every gate: planned once, bound to its reference at plan time, judged one way.

A gate's plan module builds ``Check`` objects from the inventory and its profiles: the
criterion, the reference it is held to (``Bound``: the reference itself, not its name, so
evaluation never re-reads references.yaml) and, when the plan already knows the check
cannot be measured here, a ``Ruling`` (SKIP: declared not applicable; INVALID: cannot be
evaluated). ``Check.evaluate`` is the only path from measurements to a Judgement:

>>> from kvgate.base.criteria import Criterion, Inputs, Measurement
>>> c = Check(host="h", check="fio.bw", criterion=Criterion("G2-FIO-1", "bw", ">", 0), spec=None, key="bw")
>>> c.evaluate(Inputs({"bw": Measurement("bw", 5)})).condition
'bw=5 > 0'
>>> skip = Ruling.skip("no volume")
>>> Check(host="h", check="x", criterion=c.criterion, spec=None, ruled=skip).evaluate().condition
'bw: not applicable — no volume'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from kvgate.base.criteria import Criterion, Inputs, Judgement, Measurement, Verdict, judge
from kvgate.configuration.reference_schema import Reference
from kvgate.configuration.references import criterion_for, seed_position, show_improvement

S = TypeVar("S")
NO_INPUTS = Inputs()


@dataclass(frozen=True)
class Ruling:
    """A verdict decided when the check is planned: SKIP (not applicable) or INVALID (not evaluable)."""

    verdict: Verdict
    reason: str

    @classmethod
    def skip(cls, reason: str) -> Ruling:
        return cls(Verdict.SKIP, reason)

    @classmethod
    def invalid(cls, reason: str) -> Ruling:
        return cls(Verdict.INVALID, reason)

    def judgement(self, c: Criterion) -> Judgement:
        said = "not applicable" if self.verdict is Verdict.SKIP else "not evaluable"
        return Judgement(self.verdict, f"{c.metric}: {said} — {self.reason}", c, inputs=NO_INPUTS)


@dataclass(frozen=True)
class Bound:
    """A published reference (R1–R9) bound to a check at plan time, and how the site is held to it."""

    reference: Reference
    threshold_fraction: float = 1.0
    tolerance: float = 0.0
    levels: tuple[int, ...] = ()  # concurrency levels measured: the least improvement is judged
    # what a gain far above the seed's range becomes instead of PASS (its verdict and why), where a
    # figure that far from it says the arms were not the seed's (R2/R3); None: judged as measured
    far_above: Ruling | None = None
    # False: this profile's arms are never the seed's (a smoke scale): every figure gets the
    # far_above ruling, wherever it lands, so no outcome decides whether it is compared
    comparable: bool = True

    def criterion(self) -> Criterion:
        return criterion_for(
            self.reference, threshold_fraction=self.threshold_fraction, tolerance=self.tolerance
        )

    @property
    def annotation(self) -> str:
        """'(R2: ↓26–32%)', or '(0.5 × R1: 4.1×)' when held to a fraction of it."""
        scale = "" if self.threshold_fraction == 1 else f"{self.threshold_fraction:g} × "
        return f"({scale}{self.reference.annotation})"

    def position(self, m: Measurement | None) -> str:
        """Where the site lands against the seed's range (below, inside, above, far above)."""
        if m is None or not isinstance(m.value, int | float) or isinstance(m.value, bool):
            return ""
        return seed_position(self.reference, float(m.value))

    def not_comparable(self, key: str, inputs: Inputs) -> Ruling | None:
        """The ``far_above`` ruling, with the numbers, when the judged figure or a level's lands far above.

        >>> from kvgate.configuration.references import load_references
        >>> b = Bound(load_references().get("R2-ttft-p50-tp8"), far_above=Ruling.invalid("other arms"))
        >>> b.not_comparable("t", Inputs({"t": Measurement("ttft_p50_reduction_pct", 80.0)})).reason
        "t ↓80.0%: far above the seed's ↓26–32% (3.4× the speed-up at its upper end): other arms"
        """
        if self.far_above is None:
            return None
        keys = tuple(f"{key}@c{c}" for c in self.levels) or (key,)  # each level's, where levels are judged
        kind, far = self.reference.improvement.kind, []
        for k in keys:
            m = inputs.measured.get(k)
            if m is None or isinstance(m.value, bool) or not isinstance(m.value, int | float):
                continue
            shown, where = (
                f"{k} {show_improvement(kind, float(m.value))}",
                seed_position(self.reference, m.value),
            )
            if where.startswith("far above"):
                far.append(f"{shown}: {where.split(': ', 1)[0]}")
            elif not self.comparable:  # from other arms than the seed's: not placed against its range
                far.append(shown)
        if not far:
            return None
        return Ruling(self.far_above.verdict, f"{'; '.join(dict.fromkeys(far))}: {self.far_above.reason}")

    def per_level(self, key: str, measured: dict[str, Measurement] | Inputs) -> str:
        """Each level's improvement, where the least of several levels is judged."""
        if len(self.levels) < 2:
            return ""
        found = measured.measured if isinstance(measured, Inputs) else measured
        kind, shown = self.reference.improvement.kind, []
        for c in self.levels:
            m = found.get(f"{key}@c{c}")
            value = m.value if m is not None and isinstance(m.value, int | float) else None
            shown.append(f"c{c} " + ("—" if value is None else show_improvement(kind, float(value))))
        return f"per level {', '.join(shown)} (the least is judged)"


@dataclass(frozen=True, kw_only=True)
class Check(Generic[S]):
    """One evaluated criterion on one host (or "cluster"), as planned; ``spec``: the gate's plan data."""

    host: str
    check: str  # readable id within the host: "cpu.cores", "engine[tiny].ssd-restore.cold-proof"
    criterion: Criterion
    spec: S  # what the gate needs to measure it (G1: the facts probe; G3 storage: the volume pair)
    key: str = ""  # the measurement that judges it
    status_key: str = ""  # stands in when the workload failed: it carries the reason
    subject: str = ""  # what on the host it is about: a volume, a deployment, a NIC pattern
    bound: Bound | None = None
    ruled: Ruling | None = None
    note: str = ""  # how it is measured here, said beside its verdict
    when_blocked: Verdict = Verdict.INVALID  # the declared verdict when measured but not evaluable

    @property
    def id(self) -> str:
        return f"{self.host}/{self.check}"

    @property
    def rule(self) -> str:
        return self.criterion.rule

    def evaluate(self, inputs: Inputs = NO_INPUTS) -> Judgement:
        """Judge the measurements; a ruling made at plan time wins, and nothing unmeasured is PASS."""
        if self.ruled is not None:
            return self.ruled.judgement(self.criterion)
        m = self._measurement(inputs)
        j = judge(self.criterion, m)
        if self.bound is not None:
            j = replace(j, condition=f"{j.condition} {self.bound.annotation}")
        if inputs.blocked:
            return self._blocked(j, inputs)
        # a PASS far above the seed's range, or any judged figure where the arms are never the seed's
        never = self.bound is not None and not self.bound.comparable
        judged = j.verdict is Verdict.PASS or (j.verdict is Verdict.FAIL and never)
        if judged and self.bound and (far := self.bound.not_comparable(self.key, inputs)):
            text = f"{j.condition} — not comparable: {far.reason}"
            return Judgement(far.verdict, text, self.criterion, j.measurement, inputs=self._used(inputs))
        shown = inputs.detail if j.verdict is not Verdict.PASS else ""
        levels = self.bound.per_level(self.key, inputs) if self.bound else ""
        position = self.bound.position(m) if self.bound else ""
        extra = "; ".join(x for x in (levels, position, self.note, *inputs.said, shown) if x)
        condition = f"{j.condition} — {extra}" if extra else j.condition
        return replace(j, condition=condition, inputs=self._used(inputs))

    def _used(self, inputs: Inputs) -> Inputs:
        """The inputs as the record keeps them: only the measurements this check reads."""
        levels = self.bound.levels if self.bound else ()
        keys = (self.key, self.status_key, *(f"{self.key}@c{c}" for c in levels))
        kept = {k: inputs.measured[k] for k in keys if k in inputs.measured}
        return replace(inputs, measured=kept)

    def _measurement(self, inputs: Inputs) -> Measurement | None:
        m = inputs.measured.get(self.key) or inputs.measured.get(self.status_key or "\0")
        if self.bound is not None and m is not None and m.metric != self.criterion.metric:
            raise ValueError(
                f"{self.rule} judges {self.criterion.metric!r}, got a measurement of {m.metric!r}"
            )
        return m

    def _blocked(self, j: Judgement, inputs: Inputs) -> Judgement:
        """Measured, but the number does not mean what the criterion asks: the declared verdict, shown."""
        said = "; ".join(inputs.said)
        text = f"{j.condition} — not evaluable: {inputs.blocked}" + (f"; {said}" if said else "")
        return Judgement(self.when_blocked, text, self.criterion, j.measurement, inputs=self._used(inputs))
