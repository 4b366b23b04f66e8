"""The schema of gates/references.yaml: published figures (R1–R9), typed and frozen.

Every model forbids unknown keys and checks the transcription against itself:
the stated improvement's numbers and symbols must match `kind`/`low`/`high`,
the scenario must be the table row's first cell, cross-check figures must
resolve. Errors carry their exact field path (`references[3].improvement.high`).
Load it with `kvgate.configuration.references.load_references`.
"""

from __future__ import annotations

import ast
import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, ValidationError, model_validator

from kvgate.base.config_file import Frozen, field_error
from kvgate.base.errors import ConfigError

ReportId = Annotated[str, Field(pattern=r"^R\d+(?:[/–]R\d+)?$")]
Slug = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]$")]
Name = Annotated[str, Field(pattern=r"^[a-z_][a-z0-9_]*$")]
Unit = Literal["s", "tok/s", "GB/s"]
UNIT_SUFFIX: dict[str, str] = {"s": "_s", "tok/s": "_tok_per_s", "GB/s": "_gb_per_s"}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class Kind(StrEnum):
    """How an improvement is stated: `4.1×`, `+96%`, `↓26%`."""

    RATIO = "ratio"
    PERCENT_GAIN = "percent_gain"
    PERCENT_REDUCTION = "percent_reduction"


class Direction(StrEnum):
    """Which way the metric itself is better."""

    HIGHER = "higher_is_better"
    LOWER = "lower_is_better"


class Scenario(Frozen):
    en: str = Field(min_length=1)
    zh: str = Field(min_length=1)  # the seed's table cell, verbatim


class Platform(Frozen):
    accelerator: str | None
    storage: str | None
    network: str | None


class Arms(Frozen):
    """What the baseline and candidate arms were, as far as the seed says."""

    baseline: str | None
    candidate: str | None


class Span(Frozen):
    """A published figure: one value (low == high) or a range; YAML may give a bare number."""

    low: float = Field(gt=0)
    high: float = Field(gt=0)

    @model_validator(mode="before")
    @classmethod
    def _bare_number(cls, data: Any) -> Any:
        if isinstance(data, int | float) and not isinstance(data, bool):
            return {"low": data, "high": data}
        return data

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.low > self.high:
            raise ValueError(f"low ({self.low:g}) must not exceed high ({self.high:g})")
        return self

    @property
    def is_range(self) -> bool:
        return self.low != self.high


def stated_kind(stated: str) -> Kind | None:
    """The kind a stated improvement's symbols imply: `↑5.3×` ratio, `+29%` gain, `↓26%` reduction."""
    if stated.endswith("×"):
        return Kind.RATIO
    if stated.endswith("%") and stated[:1] in ("↓", "-", "−"):
        return Kind.PERCENT_REDUCTION
    if stated.endswith("%") and stated[:1] in ("+", "↑"):
        return Kind.PERCENT_GAIN
    return None


class Improvement(Frozen):
    """The improvement as the seed states it, and its numbers parsed."""

    stated: str = Field(min_length=1)
    kind: Kind
    low: float = Field(gt=0)
    high: float = Field(gt=0)

    @model_validator(mode="after")
    def _matches_stated(self) -> Improvement:
        if self.low > self.high:
            raise _error(("high",), f"must be ≥ low ({self.low:g})", self.high)
        if stated_kind(self.stated) is not self.kind:
            raise ValueError(f"stated {self.stated!r} does not read as kind {self.kind.value!r}")
        if self.kind is Kind.PERCENT_REDUCTION and self.high >= 100:
            raise ValueError(f"a reduction must be below 100%, got {self.high:g}")
        numbers = [float(n) for n in _NUMBER.findall(self.stated)]
        if sorted(set(numbers)) != sorted({self.low, self.high}):
            raise ValueError(
                f"stated {self.stated!r} gives {numbers}, but low/high are {self.low:g}/{self.high:g}"
            )
        return self

    def half_units(self) -> tuple[float, float]:
        """Rounding of the stated low and high: half a unit in their last written digit."""
        texts = _NUMBER.findall(self.stated)
        halves = [0.5 * 10.0 ** -len(t.partition(".")[2]) for t in texts]
        return halves[0], halves[-1]


class Source(Frozen):
    """Where the figures come from: document, 出处 cell, table row and prose, verbatim."""

    document: str = Field(pattern=r"^seed: \S+$")
    label: str  # the 出处 cell, e.g. "R2 实测"
    row: str  # the table row, verbatim
    prose: tuple[str, ...] = ()

    @property
    def cells(self) -> tuple[str, ...]:
        return tuple(c.strip() for c in self.row.strip().strip("|").split("|"))

    @model_validator(mode="after")
    def _row_shape(self) -> Source:
        if len(self.cells) != 5:
            raise _error(
                ("row",),
                "expected a table row of 5 cells: | 场景 | 基线 | 接入 FX100 后 | 改善 | 出处 |",
                None,
            )
        if self.cells[4] != self.label:
            raise _error(("label",), f"must equal the row's 出处 cell {self.cells[4]!r}", None)
        return self


class SourceReport(Frozen):
    """Where the seed's figure was measured: its primary source (shared/SEED-SOURCES.md)."""

    repository: str = Field(pattern=r"^[\w.-]+/[\w.-]+$")  # owner/name on GitHub
    commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")  # as read
    report: str | None  # the report's path in the repository; None: the repository has no report for it
    sections: tuple[str, ...] = ()  # where in the report
    data: tuple[str, ...] = ()  # results files and scripts that carry or produced the figure


class Binding(Frozen):
    """How the seed's source measured a figure, so kvgate measures it the same way (or says where not)."""

    source: SourceReport
    arms: Arms  # as the source states them (the seed's table often does not)
    workload: str = Field(min_length=1)
    cache_settings: str | None  # engine and cache settings as the source states them; None: not stated
    kvgate: str = Field(min_length=1)  # the G3 arms and profile section that judge it


Concurrency = Annotated[int, Field(ge=1)] | str | None


class Reference(Frozen):
    """One published figure pair with its improvement, scenario and provenance."""

    id: Slug
    report: ReportId
    scenario: Scenario
    model: str | None
    platform: Platform
    parallelism: str | None
    cards: int | None = Field(ge=1)
    concurrency: Concurrency
    arms: Arms
    metric: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    unit: Unit
    direction: Direction
    baseline: Span | None
    candidate: Span | None
    improvement: Improvement
    note: str | None = None
    source: Source
    binding: Binding | None = None  # how the seed's source measured it (every shipped reference has one)

    @model_validator(mode="after")
    def _coherent(self) -> Reference:
        _check(
            self.id.startswith(self.report.replace("/", "") + "-"), ("id",), f"must start with {self.report}-"
        )
        _check(
            self.metric.endswith(UNIT_SUFFIX[self.unit]), ("metric",), f"must end in the unit {self.unit!r}"
        )
        both = (self.baseline is None) == (self.candidate is None)
        _check(both, ("candidate",), "baseline and candidate must both be given or both be null")
        if self.baseline and self.candidate:
            same = self.baseline.is_range == self.candidate.is_range
            _check(same, ("candidate",), "must be a range exactly when the baseline is one")
        reduction = self.improvement.kind is Kind.PERCENT_REDUCTION
        _check(
            not reduction or self.direction is Direction.LOWER,
            ("direction",),
            "a reduction needs lower_is_better",
        )
        cells = self.source.cells
        _check(cells[0] == self.scenario.zh, ("scenario", "zh"), f"must equal the row's cell {cells[0]!r}")
        parts = cells[3].split(" / ")
        _check(self.improvement.stated in parts, ("improvement", "stated"), f"must be one of {parts}")
        _check(self.source.label.startswith(self.report), ("source", "label"), f"must name {self.report}")
        return self

    @property
    def quantity(self) -> str:
        """The metric without its unit: `ttft_p50_s` → `ttft_p50`."""
        return self.metric.removesuffix(UNIT_SUFFIX[self.unit])

    @property
    def improvement_metric(self) -> str:
        """Name of the measured improvement: `ttft_p50_reduction_pct`, `load_time_speedup_x`."""
        if self.improvement.kind is Kind.PERCENT_REDUCTION:
            return f"{self.quantity}_reduction_pct"
        if self.improvement.kind is Kind.PERCENT_GAIN:
            return f"{self.quantity}_gain_pct"
        word = "speedup" if self.direction is Direction.LOWER else "gain"
        return f"{self.quantity}_{word}_x"

    @property
    def annotation(self) -> str:
        """`R2: ↓26–32%` — the report and the improvement as stated."""
        return f"{self.report}: {self.improvement.stated}"


class ContextFigure(Frozen):
    """A figure the seed states about a setup (snapshot size, cards, link speed, parallelism)."""

    id: Slug
    report: ReportId | None
    value: float | int | str
    unit: str | None
    description: str
    quote: str  # the seed's wording, verbatim


def parse_expression(text: str) -> ast.Expression:
    """Parse arithmetic over names and numbers (+ − × /); anything else is refused."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError("not an arithmetic expression") from None
    except (RecursionError, MemoryError):  # Python's parser on thousands of nested operators
        raise ValueError("an arithmetic expression nested too deeply") from None
    allowed = (
        ast.Expression,
        ast.BinOp,
        ast.UnaryOp,
        ast.USub,
        ast.Add,
        ast.Sub,
        ast.Mult,
        ast.Div,
        ast.Name,
        ast.Load,
    )
    for node in ast.walk(tree):
        is_number = isinstance(node, ast.Constant) and type(node.value) in (int, float)
        if not (is_number or isinstance(node, allowed)):
            raise ValueError("only numbers, figure names and + - * / are allowed")
    return tree


def expression_names(text: str) -> set[str]:
    """The figure names an expression uses."""
    return {n.id for n in ast.walk(parse_expression(text)) if isinstance(n, ast.Name)}


class CrossCheck(Frozen):
    """A relation between figures that should hold if they describe what their rows say."""

    id: Slug
    claim: str
    reason: str
    # name → <reference id>.baseline|candidate[.low|.high] or context.<id>
    figures: dict[Name, str] = Field(min_length=1)
    left: str = Field(max_length=500)  # a formula over a few figures; its evaluation recurses per operator
    compare: Literal["approx", "<=", ">="]
    right: str = Field(max_length=500)
    rel_tolerance: float = Field(ge=0, lt=1)
    unit: str

    @model_validator(mode="after")
    def _names(self) -> CrossCheck:
        used: set[str] = set()
        for side in ("left", "right"):
            try:
                names = expression_names(getattr(self, side))
            except ValueError as exc:
                raise _error((side,), str(exc), getattr(self, side)) from None
            unknown = names - set(self.figures)
            _check(not unknown, (side,), f"uses {sorted(unknown)}, not defined under figures")
            used |= names
        _check(used == set(self.figures), ("figures",), f"unused: {sorted(set(self.figures) - used)}")
        return self


class Figure(Frozen):
    """A resolved number with its unit."""

    value: float
    unit: str


class References(Frozen):
    """All references, context figures and cross-checks of one file; see `load_references`."""

    references: tuple[Reference, ...] = Field(min_length=1)
    context: tuple[ContextFigure, ...] = ()
    cross_checks: tuple[CrossCheck, ...] = ()
    _path: str = PrivateAttr(default="<references>")

    @model_validator(mode="after")
    def _links(self) -> References:
        for section in ("references", "context", "cross_checks"):
            _unique_ids(section, getattr(self, section))
        for i, check in enumerate(self.cross_checks):
            for name, path in check.figures.items():
                try:
                    self.figure(path)
                except (KeyError, ValueError) as exc:
                    raise _error(("cross_checks", i, "figures", name), str(exc.args[0]), path) from None
        return self

    @property
    def path(self) -> str:
        """The file these references were loaded from."""
        return self._path

    @property
    def entries(self) -> tuple[Reference, ...]:
        """The references, in file order."""
        return self.references

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.references)

    def get(self, ref_id: str) -> Reference:
        """The reference with this id; a missing one is a ConfigError, never a pass."""
        for ref in self.references:
            if ref.id == ref_id:
                return ref
        known = ", ".join(self.ids)
        raise ConfigError(self.path, "references", f"no reference with id {ref_id!r}; known ids: {known}")

    def figure(self, path: str) -> Figure:
        """Resolve `R1-x.baseline`, `R1-x.candidate.high` or `context.<id>` to a number."""
        head, _, rest = path.partition(".")
        if head == "context":
            return self._context_figure(rest)
        ref = next((r for r in self.references if r.id == head), None)
        if ref is None:
            raise KeyError(
                f"no reference {head!r} (expected <reference id>.baseline|candidate or context.<id>)"
            )
        return _span_figure(ref, rest)

    def _context_figure(self, ctx_id: str) -> Figure:
        item = next((c for c in self.context if c.id == ctx_id), None)
        if item is None:
            raise KeyError(f"no context figure {ctx_id!r}")
        if isinstance(item.value, str):
            raise ValueError(f"context figure {ctx_id!r} is text ({item.value!r}), not a number")
        return Figure(value=float(item.value), unit=item.unit or "")


def _span_figure(ref: Reference, rest: str) -> Figure:
    arm, _, end = rest.partition(".")
    if arm not in ("baseline", "candidate") or end not in ("", "low", "high"):
        raise ValueError(f"expected {ref.id}.baseline|candidate[.low|.high], got {ref.id}.{rest}")
    span: Span | None = getattr(ref, arm)
    if span is None:
        raise ValueError(f"{ref.id} publishes no {arm} figure")
    if span.is_range and not end:
        raise ValueError(f"the {arm} of {ref.id} is a range: name its .low or .high")
    return Figure(value=span.high if end == "high" else span.low, unit=ref.unit)


def _unique_ids(section: str, items: tuple[Reference | ContextFigure | CrossCheck, ...]) -> None:
    seen: dict[str, int] = {}
    for i, item in enumerate(items):
        if item.id in seen:
            raise _error(
                (section, i, "id"), f"duplicate id {item.id!r} (also {section}[{seen[item.id]}])", item.id
            )
        seen[item.id] = i


def _error(loc: tuple[str | int, ...], message: str, value: Any) -> ValidationError:
    """A validation error at a precise field path (pydantic keeps its `loc`)."""
    return field_error(loc, message, value)


def _check(ok: bool, loc: tuple[str | int, ...], message: str) -> None:
    if not ok:
        raise _error(loc, message, None)
