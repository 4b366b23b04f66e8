"""Load a user-written YAML file into a pydantic model; every error names file, field, expectation.

Every file a person edits (inventories, waivers, references, workload and engine
profiles, fio matrices) comes through here, so a hostile or broken one is a
ConfigError, never a hang or a traceback: only a regular file is opened (a FIFO or
a device given by mistake cannot stall the read), its size is bounded, it must be
UTF-8 without NUL bytes, and the YAML itself is read by ``kvgate.base.safe_yaml``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from kvgate.base.errors import ConfigError
from kvgate.base.safe_yaml import YamlRefused, parse
from kvgate.base.safefile import file_kind

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
REPO_ROOT = Path(__file__).resolve().parents[2]  # workloads/, gates/, inventory/ and reports/ live here
MAX_FILE_BYTES = 256 * 1024  # the largest shipped file (gates/references.yaml) is ~23 KiB
MAX_LISTED_ERRORS = 10


def repo_root() -> Path:
    """The checkout kvgate runs from: where its shipped YAML files live."""
    return REPO_ROOT


class Frozen(BaseModel):
    """The base of every configuration file's model: immutable, unknown keys refused (a typo is an
    error naming its field), and a number that is not finite ("inf" as a string too) never a bound."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Shipped(Generic[T]):
    """The shipped files of one kind, ``<directory>/<name>.yaml``, each loaded once per process.

    >>> from kvgate.configuration.engine_profile import engine_profile
    >>> engine_profile("vllm-lmcache") is engine_profile("vllm-lmcache"), engine_profile.path("x").name
    (True, 'x.yaml')
    """

    def __init__(self, directory: Path, load: Callable[[Path], T]) -> None:
        self.directory = directory
        self._load = load
        self._loaded: dict[str, T] = {}

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.yaml"

    def __call__(self, name: str) -> T:
        if name not in self._loaded:
            self._loaded[name] = self._load(self.path(name))
        return self._loaded[name]


class NotRegular(Exception):
    """The path is not a regular file, or a file larger than allowed; str() says which."""


def read_regular(path: Path, *, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; opened non-blocking, so never a FIFO's wait.

    Raises NotRegular, or OSError (FileNotFoundError, PermissionError, …) as the system gave it.
    """
    _regular(os.stat(path), max_bytes)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        _regular(os.fstat(fd), max_bytes)  # replaced between stat and open
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise NotRegular(f"the file is larger than {max_bytes // 1024} KiB")
    return data


def _regular(st: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(f"expected a regular file, got {file_kind(st.st_mode)}")
    if st.st_size > max_bytes:
        raise NotRegular(f"the file is larger than {max_bytes // 1024} KiB")


def read_bytes(path: Path) -> bytes:
    """A user-written file's bytes (at most MAX_FILE_BYTES of a regular file); raises ConfigError."""
    try:
        return read_regular(path, max_bytes=MAX_FILE_BYTES)
    except NotRegular as exc:
        raise ConfigError(str(path), "", str(exc)) from None
    except OSError as exc:
        raise ConfigError(str(path), "", f"cannot read the file ({exc.strerror})") from None


def decode(raw: bytes, path: Path) -> str:
    """UTF-8 text (a BOM is allowed); bad bytes and NUL bytes are refused with their line."""
    problem = text_problem(raw)
    if problem is not None:
        raise ConfigError(str(path), *problem)
    return raw.decode("utf-8").removeprefix("\ufeff")


def text_problem(raw: bytes) -> tuple[str, str] | None:
    """(where, what) when the bytes are not UTF-8 text without NUL bytes; None when they are."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _position(raw, exc.start), f"not UTF-8 text (byte 0x{raw[exc.start]:02x})"
    if b"\x00" in raw:
        return _position(raw, raw.index(b"\x00")), "a NUL byte: expected a text file"
    return None


def _position(raw: bytes, offset: int) -> str:
    line, line_start = raw.count(b"\n", 0, offset) + 1, raw.rfind(b"\n", 0, offset) + 1
    return f"line {line}, column {offset - line_start + 1}"


def parse_yaml(raw: bytes, path: Path) -> Any:
    """Parse a file's bytes as YAML (kvgate.base.safe_yaml); a problem names its line and field."""
    text = decode(raw, path)
    try:
        return parse(text)
    except YamlRefused as exc:
        raise ConfigError(str(path), exc.where, exc.problem) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(str(path), where, f"not valid YAML: {problem}") from None


def read_yaml(path: Path) -> Any:
    """Read and parse a YAML file; every problem is a ConfigError naming the file."""
    return parse_yaml(read_bytes(path), path)


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
    if not err.get("loc") and isinstance(got, dict):  # a rule of the whole file names its own fields
        return msg
    if isinstance(got, dict | list | tuple):
        return f"{msg}, got a {'mapping' if isinstance(got, dict) else 'list'}"
    return msg if got is None else f"{msg}, got {_short(got)}"


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def load_model(path: Path, model: type[M], data: Any = None) -> M:
    """Validate YAML data (read from path unless given) as `model`."""
    if data is None:
        data = read_yaml(path)
    if not isinstance(data, dict):
        got = "an empty file" if data is None else type(data).__name__
        raise ConfigError(str(path), "", f"expected a mapping at the top level, got {got}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc) from None


def validation_error(path: Path, exc: ValidationError) -> ConfigError:
    """The first error as field and expectation, then the next few, each on its own line."""
    errors = exc.errors()
    lines = [f"{field_path(e['loc']) or '(top level)'}: {explain(dict(e))}" for e in errors]
    first, *rest = lines[:MAX_LISTED_ERRORS]
    field, _, expected = first.partition(": ")
    more = "".join(f"\n  {path}: {line}" for line in rest)
    if len(errors) > MAX_LISTED_ERRORS:
        more += f"\n  … and {len(errors) - MAX_LISTED_ERRORS} more errors"
    return ConfigError(str(path), field, expected + more)


def field_error(loc: tuple[str | int, ...], message: str, value: Any) -> ValidationError:
    """A validation error at a precise field path, raised from a model validator (pydantic keeps `loc`)."""
    kind = PydanticCustomError("kvgate", "{why}", {"why": message})
    return ValidationError.from_exception_data("kvgate", [InitErrorDetails(type=kind, loc=loc, input=value)])
