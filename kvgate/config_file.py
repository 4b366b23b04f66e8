"""Load a user-written YAML file into a pydantic model; every error names file, field, expectation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from kvgate.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def read_yaml(path: Path) -> Any:
    """Parse YAML; a syntax error names the line."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read the file ({exc.strerror})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(str(path), where, f"not valid YAML: {problem}") from None


def field_path(loc: tuple[int | str, ...]) -> str:
    """('hosts', 'gpu-1', 'port') -> 'hosts.gpu-1.port'; list indexes as [0]."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def explain(err: dict[str, Any]) -> str:
    """A pydantic error as 'expected …, got …'."""
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        return "unknown field (check the spelling)"
    if err["type"] == "missing":
        return "required field is missing"
    got = err.get("input")
    shown = "" if isinstance(got, dict | list) or got is None else f", got {got!r}"
    return f"{msg}{shown}"


def load_model(path: Path, model: type[M], data: Any = None) -> M:
    """Validate YAML data (read from path unless given) as `model`."""
    if data is None:
        data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(str(path), "", f"expected a mapping at the top level, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = [f"{field_path(e['loc']) or '(top level)'}: {explain(dict(e))}" for e in exc.errors()]
        first, *rest = lines
        field, _, expected = first.partition(": ")
        more = "".join(f"\n  {path}: {line}" for line in rest)
        raise ConfigError(str(path), field, expected + more) from None
