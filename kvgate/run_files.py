"""What a run directory's files must hold when kvgate reads them back (``report``, ``--resume``).

A run directory is written by kvgate, but it is an ordinary directory a person can
edit, truncate or copy half of. What the readers rely on is checked here, so an
edited file is a StoreError naming the file, the line or field path and what was
expected, never a KeyError in the middle of a report. Gate-specific keys of run.json
(``g3_rows``, ``g4_jobs``, …) are their gate's to read.

>>> check_meta({"schema": "kvgate.run/1", "gate": "g1", "site": "s", "status": "running"}, "run.json")["gate"]
'g1'
>>> check_meta({"schema": "kvgate.run/1", "gate": "g1", "site": "s", "status": "running", "planned": 3}, "x")
Traceback (most recent call last):
...
kvgate.errors.StoreError: x: planned: Input should be a valid list, got 3
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kvgate.config_file import NotRegular, explain, field_error, field_path, read_regular, text_problem
from kvgate.errors import StoreError
from kvgate.inventory.fields import Name
from kvgate.judge import COMPARATORS, Verdict


class _Read(BaseModel):
    """Keys kvgate reads are typed; others are kept for their own readers."""

    model_config = ConfigDict(extra="allow", strict=True)


class _InventoryRef(_Read):
    path: str
    sha256: str


class _HostRecord(_Read):
    roles: list[str] = []


class _TableData(_Read):
    """reports/templates/sections/table.html's data."""

    columns: list[Any]
    rows: list[list[Any]]


class _ChartData(_Read):
    """reports/templates/sections/chart.html's data (what the SVG may contain is the report's to check)."""

    svg: str = Field(pattern=r"^\s*<svg[\s>]")


# every section template and the data it renders: a new template adds its data model here
_SECTION_DATA: dict[str, type[_Read]] = {"table.html": _TableData, "chart.html": _ChartData}


class _Section(_Read):
    title: str
    template: str
    data: dict[str, Any] = {}

    @model_validator(mode="after")
    def _data_fits_template(self) -> _Section:
        model = _SECTION_DATA.get(self.template.removeprefix("sections/"))
        if model is None:
            known = ", ".join(_SECTION_DATA)
            raise field_error(("template",), f"expected one of the section templates: {known}", self.template)
        try:
            model.model_validate(self.data)
        except ValidationError as exc:
            e = exc.errors()[0]
            raise field_error(("data", *e["loc"]), explain(dict(e)), None) from None
        return self


class RunMeta(_Read):
    """run.json: the keys the report, gate order and ``--resume`` read."""

    schema_: str = Field(alias="schema")
    gate: Name  # the names of a run come from an inventory: anything else was edited in
    site: Name
    status: Literal["running", "interrupted", "incomplete", "complete"]
    started_at: str | None = None
    ended_at: str | None = None
    planned: list[str] = []
    resumes: list[str] = []
    inventory: _InventoryRef | None = None
    hosts: dict[Name, _HostRecord] = {}
    forced: list[dict[str, Any]] = []
    waivers: list[dict[str, Any]] = []
    manifest: dict[str, dict[str, Any]] = {}
    tool_versions: dict[str, dict[str, Any]] = {}
    argv: list[str] | str | None = None
    reference_notes: list[Any] = []
    sections: list[_Section] | None = None


class StoredCheck(_Read):
    """One line of checks.jsonl, as ``kvgate.store.CheckRecord`` writes it."""

    id: str
    host: Name  # an inventory host, or "cluster"
    check: str
    verdict: Verdict = Field(strict=False)  # stored as its string value
    condition: str = ""
    rule: str = ""
    metric: str = ""
    measured: Any = None
    expected: Any = None
    comparator: str = ""
    unit: str = ""
    tolerance: float = Field(default=0.0, strict=False, allow_inf_nan=False)
    source: str = ""
    evidence: list[str] = []
    waiver: dict[str, str] | None = None
    duration_s: float = Field(default=0.0, strict=False, allow_inf_nan=False)
    at: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> StoredCheck:
        if self.id != f"{self.host}/{self.check}":
            raise ValueError(
                f"id {self.id!r} is not '<host>/<check>' of host {self.host!r}, check {self.check!r}"
            )
        if self.comparator not in ("", *COMPARATORS):
            raise ValueError(
                f"comparator {self.comparator!r} is none of the judge's: {', '.join(COMPARATORS)}"
            )
        return self


class ArtifactEntry(_Read):
    """One line of artifacts/index.jsonl."""

    path: str
    sha256: str = ""
    bytes: int = Field(default=0, ge=0)
    host: str = ""


MAX_RUN_FILE_BYTES = 256 << 20  # a 72 h soak's run.json is a few MB


def read_text(path: Path) -> str:
    """A run file's text; FileNotFoundError passes, anything else wrong is a StoreError naming it."""
    try:
        raw = read_regular(path, max_bytes=MAX_RUN_FILE_BYTES)
    except NotRegular as exc:
        raise StoreError(f"{path}: {exc}") from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StoreError(f"{path}: unreadable ({exc.strerror})") from None
    problem = text_problem(raw)
    if problem is not None:
        raise StoreError(f"{path}: {problem[0]}: {problem[1]}")
    return raw.decode("utf-8")


def _problem(where: str, exc: ValidationError) -> StoreError:
    e = exc.errors()[0]
    return StoreError(f"{where}: {field_path(e['loc']) or '(top level)'}: {explain(dict(e))}")


def parse_json(text: str, where: str) -> Any:
    """A JSON document; bad text (or nesting too deep to read) is a StoreError naming ``where``."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        why = exc if isinstance(exc, ValueError) else "nested too deeply"
        raise StoreError(f"{where}: not valid JSON ({why})") from None


def check_meta(data: Any, where: str) -> dict[str, Any]:
    """run.json's content: an object with the keys and types its readers use."""
    return _checked(data, where, RunMeta)


def parse_lines(text: str, where: str, model: type[_Read]) -> list[dict[str, Any]]:
    """A JSON-lines file, one object per line; only a last line without its newline may be torn."""
    lines = text.split("\n")
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = parse_json(line, f"{where}: line {n}")
        except StoreError:
            if n == len(lines):  # no newline after it: a crash mid-write, not an edit
                continue
            raise
        out.append(_checked(rec, f"{where}: line {n}", model))
    return out


def _checked(rec: Any, where: str, model: type[_Read]) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise StoreError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    try:
        model.model_validate(rec)
    except ValidationError as exc:
        raise _problem(where, exc) from None
    return rec
