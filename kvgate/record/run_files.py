"""What a run directory's files must hold when kvgate reads them back (``report``, ``--resume``).

A run directory is written by kvgate, but it is an ordinary directory a person can
edit, truncate or copy half of. What the readers rely on is checked here, so an
edited file is a StoreError naming the file, the line or field path and what was
expected, never a KeyError in the middle of a report. The schema itself is kvgate.record's.

>>> check_meta({"schema": "kvgate.run/1", "gate": "g1", "site": "s", "status": "running"}, "x")
Traceback (most recent call last):
...
kvgate.base.errors.StoreError: x: schema: 'kvgate.run/1', expected 'kvgate.run/2' (an earlier kvgate's run)
>>> check_meta({"schema": "kvgate.run/2", "gate": "g1", "site": "s", "status": "running", "planned": 3}, "x")
Traceback (most recent call last):
...
kvgate.base.errors.StoreError: x: planned: Input should be a valid list, got 3
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from kvgate.base.config_file import explain, field_path, text_problem
from kvgate.base.errors import StoreError
from kvgate.base.safefile import read_file
from kvgate.record.schema import SCHEMA, RunRecord

Line = TypeVar("Line", bound=BaseModel)  # one line's record: JudgementRecord, ArtifactRecord


MAX_RUN_FILE_BYTES = 256 << 20  # a 72 h soak's run.json is a few MB


def read_text(path: Path) -> str:
    """A run file's text; FileNotFoundError passes, anything else wrong is a StoreError naming it."""
    raw = read_file(path, max_bytes=MAX_RUN_FILE_BYTES)  # a regular file, never a link's or FIFO's
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
    """run.json's content, in today's schema (no migration before the first release): every key typed."""
    if not isinstance(data, dict):
        raise StoreError(f"{where}: expected a JSON object, got {type(data).__name__}")
    if data.get("schema") != SCHEMA:
        why = f"{data.get('schema')!r}, expected {SCHEMA!r} (an earlier kvgate's run)"
        raise StoreError(f"{where}: schema: {why}")
    _checked(data, where, RunRecord)
    return data


def parse_lines(text: str, where: str, model: type[Line]) -> list[Line]:
    """A JSON-lines file, one record per line; only a last line without its newline may be torn."""
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


def _checked(rec: Any, where: str, model: type[Line]) -> Line:
    if not isinstance(rec, dict):
        raise StoreError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    try:
        return model.model_validate(rec)
    except ValidationError as exc:
        raise _problem(where, exc) from None
