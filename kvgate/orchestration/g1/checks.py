"""PlannedCheck and the pieces every G1 check is built from (pure: facts in, Judgement out).

A check is planned from the inventory alone; its evaluator reads one facts family.
Rules shared by all checks live in `evaluate_facts`: a declared-not-applicable
check is SKIP, a missing tool the check needs is FAIL, a failed family is INVALID.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kvgate.base.criteria import Criterion, Inputs, Judgement, Measurement, Verdict, fmt, worst
from kvgate.configuration.inventory import Expectations, Inventory
from kvgate.judgement import Check, Ruling
from kvgate.probes.facts import Collected, HostFacts, artifact_name

Evaluator = Callable[["PlannedCheck", Collected], Judgement]
HEALTH = "kvgate G1 health rule"  # the source of a health limit kvgate sets where a BOM states none
TOOL_NAMES = {"nvme": "nvme-cli", "chronyc": "chrony (chronyc)"}
SYMBOLS = {"==": "=", ">=": "≥", "<=": "≤", "version>=": "≥", "version==": "=", "matches": "matches"}


@dataclass(frozen=True)
class FactsProbe:
    """What a G1 check reads: one facts family, the tool it needs, and its evaluator."""

    family: str  # the facts family the evaluator reads
    tool: str | None = None  # the tool whose absence makes this check FAIL ("a or b": both absent)
    evaluator: Evaluator | None = field(default=None, compare=False, repr=False)


PlannedCheck = Check[FactsProbe]


def evaluate_facts(check: PlannedCheck, facts: HostFacts) -> Judgement:
    """Judge a G1 check on a host's facts; never PASS without a measured value."""
    if check.ruled is not None:
        return check.evaluate()
    probe = check.spec
    col = facts.family(probe.family)
    if probe.tool is not None and all(t in col.missing_tools for t in probe.tool.split(" or ")):
        return missing_tool(check)
    if "family" in col.errors:
        return invalid(check, col.errors["family"])
    if probe.evaluator is None:
        return invalid(check, "no evaluator planned for this check")
    return probe.evaluator(check, col)


def expectation_text(check: PlannedCheck) -> str:
    """`nvme.count=2`, `tool[fio].version ≥ 3.28`: what the check would have verified."""
    c = check.criterion
    symbol = SYMBOLS.get(c.comparator, c.comparator)
    return (
        f"{check.check}={fmt(c.expected)}" if symbol == "=" else f"{check.check} {symbol} {fmt(c.expected)}"
    )


def missing_tool(check: PlannedCheck) -> Judgement:
    """FAIL: the BOM requires something only an absent tool can show."""
    tool = TOOL_NAMES.get(str(check.spec.tool), str(check.spec.tool))
    return Judgement(
        Verdict.FAIL,
        f"{tool} not installed on host: cannot verify {expectation_text(check)}",
        check.criterion,
    )


def invalid(check: PlannedCheck, reason: str) -> Judgement:
    """INVALID: the value could not be measured or cannot be trusted."""
    return Judgement(Verdict.INVALID, f"{check.criterion.metric}: {reason}", check.criterion)


def errors_text(col: Collected, *names: str) -> str | None:
    """The recorded errors of the named sub-probes (all of them when none is named)."""
    picked = [f"{k}: {v}" for k, v in col.errors.items() if not names or k in names]
    return "; ".join(picked) or None


def probe_error(check: PlannedCheck, col: Collected, *names: str) -> Judgement | None:
    """INVALID with the recorded errors when a named sub-probe (any, when none is named) failed."""
    err = errors_text(col, *names)
    return invalid(check, err) if err else None


def not_reported(check: PlannedCheck, col: Collected, *names: str, missing: str) -> Judgement:
    """INVALID for a fact that is absent: the named sub-probes' errors, else `missing`."""
    return invalid(check, errors_text(col, *names) or missing)


def evidence(check: PlannedCheck, col: Collected) -> tuple[str, ...]:
    """Run-directory paths of the raw outputs backing a measurement."""
    return tuple(f"artifacts/{check.host}/{artifact_name(check.spec.family, name)}" for name in col.artifacts)


def measure(check: PlannedCheck, col: Collected, value: Any, *, metric: str | None = None) -> Judgement:
    """judge() one measured value; `metric` relabels it, e.g. 'nvme0n1.media_errors'."""
    criterion = dataclasses.replace(check.criterion, metric=metric) if metric else check.criterion
    part = dataclasses.replace(check, criterion=criterion, key=criterion.metric)
    m = Measurement(criterion.metric, value, criterion.unit, evidence(check, col))
    return part.evaluate(Inputs({criterion.metric: m}))


def combine(check: PlannedCheck, parts: Sequence[Judgement], none_found: str) -> Judgement:
    """Several per-device judgements as one: the worst verdict, every condition listed, the parts'
    evidence kept (its value is the parts', in the condition)."""
    if not parts:
        return invalid(check, none_found)
    verdict = worst([p.verdict for p in parts])
    shown = tuple(dict.fromkeys(e for p in parts if p.measurement for e in p.measurement.evidence))
    c = check.criterion
    return Judgement(
        verdict,
        "; ".join(p.condition for p in parts),
        c,
        Measurement(c.metric, _binding_value(c.comparator, parts, verdict), c.unit, shown) if shown else None,
        extra={"parts": [{"verdict": str(p.verdict), "condition": p.condition} for p in parts]},
    )


def _binding_value(comparator: str, parts: Sequence[Judgement], verdict: Verdict) -> Any:
    """The part value the verdict rests on, shown as the check's measured value: the least of
    ``≥`` bounds, the most of ``≤`` ones, the one value every part shares, else the worst part's."""
    worst_parts = [p for p in parts if p.verdict is verdict]
    values = [p.measurement.value for p in worst_parts if p.measurement and p.measurement.value is not None]
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers and len(numbers) == len(values) and comparator in (">=", ">", "<=", "<"):
        return min(numbers) if comparator in (">=", ">") else max(numbers)
    return values[0] if values and all(v == values[0] for v in values) else None


def with_note(j: Judgement, note: str | None) -> Judgement:
    """Append detail to a judgement's condition without changing its verdict."""
    return dataclasses.replace(j, condition=f"{j.condition} — {note}") if note else j


def fact_value(key: str, scale: float | None, check: PlannedCheck, col: Collected) -> Judgement:
    """Evaluator for a single fact (optionally scaled, e.g. bytes -> GiB)."""
    value = col.facts.get(key)
    if value is None:
        return invalid(check, errors_text(col) or f"{key} was not reported")
    return measure(check, col, round(value * scale, 3) if scale else value)


@dataclass(frozen=True)
class PlanContext:
    """One host's expectations plus where each of them was written in the inventory."""

    inventory: Inventory
    host: str

    @cached_property
    def expect(self) -> Expectations:
        """The host's merged BOM (its groups', then its own)."""
        return self.inventory.expectations(self.host)

    def source(self, *path: str | int) -> str:
        """'inventory: groups.gpu-nodes.cpu.cores' or '... hosts.gpu-2.expect.memory.total_gib'."""
        dotted = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        origin = self._origin(str(path[0]))
        if origin is None:
            return f"inventory: {dotted} (default)"
        base, model = origin
        default = "" if _explicit(model, path) else " (default)"
        return f"inventory: {base}.{dotted}{default}"

    def _origin(self, top: str) -> tuple[str, Expectations] | None:
        host = self.inventory.hosts[self.host]
        if top in host.expect.model_fields_set:
            return f"hosts.{self.host}.expect", host.expect
        for group in reversed(host.groups):
            if top in self.inventory.groups[group].model_fields_set:
                return f"groups.{group}", self.inventory.groups[group]
        return None


def _explicit(model: Any, path: tuple[str | int, ...]) -> bool:
    """True when every step of `path` was written in the inventory (not a default)."""
    node = model
    for step in path:
        if isinstance(step, int) or isinstance(node, dict):
            node = node[step]
            continue
        if step not in getattr(node, "model_fields_set", {step}):
            return False
        node = getattr(node, step)
    return True


def planned(
    pc: PlanContext,
    check: str,
    family: str,
    criterion: Criterion,
    evaluator: Evaluator | None,
    *,
    tool: str | None = None,
    skip: str | None = None,
) -> PlannedCheck:
    """A PlannedCheck for `pc.host` whose rule id is the criterion's."""
    return Check(
        host=pc.host,
        check=check,
        criterion=criterion,
        spec=FactsProbe(family, tool, evaluator),
        key=criterion.metric,
        subject=family,
        ruled=Ruling.skip(skip) if skip else None,
    )


def part_invalid(check: PlannedCheck, label: str, reason: str) -> Judgement:
    """An INVALID per-device part of a combined check."""
    return Judgement(Verdict.INVALID, f"{label}: {reason}", check.criterion)
