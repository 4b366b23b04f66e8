"""Placeholders in engine profiles, and the files and arguments built from them without injection.

Templates may use ``{python} {model} {port} {host} {cache_dir} {run_dir} {api_port}``. A value
comes from the inventory (a volume's path, a model path): it may hold a ``"``, a
``:`` or a ``#``, so a placeholder never lands inside structured text. A config
file in a data format is declared as data and serialized here; an argument that is
JSON is declared as ``{json: …}`` and serialized here; a plain template that would
parse as JSON or YAML structure, or a data-format file written as text, is refused
when it holds a placeholder. Placeholders may appear only in scalar strings, never
in keys, and a value with a control character is never filled in.

>>> DataFile(format="json", data={"root_dir": "{cache_dir}/t"}).render({"cache_dir": '/v/a"b'})
'{"root_dir": "/v/a\\\\"b/t"}'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, Field, field_validator

from kvgate.base.config_file import Frozen
from kvgate.base.errors import LabError

PLACEHOLDERS = frozenset({"python", "model", "port", "host", "cache_dir", "run_dir", "api_port"})
INT_PLACEHOLDERS = frozenset({"port", "api_port"})
# `{name}` with a bare identifier; JSON/YAML braces (`{"a": 1}`, `{use_odirect: true}`) never match
_HOLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
DATA_SUFFIXES = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf")
RESERVED = re.compile(r"engine\.pid|engine-\d+\.log")  # what EngineService itself writes in the run dir


def holes(template: str) -> set[str]:
    """The placeholder names used in a template."""
    return set(_HOLE.findall(template))


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` placeholders; anything else (JSON braces) is left alone."""
    return _HOLE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def check_template(text: str) -> str:
    """``text`` when every placeholder in it is known; ValueError naming the unknown ones."""
    unknown = holes(text) - PLACEHOLDERS
    if unknown:
        names = ", ".join(sorted(f"{{{u}}}" for u in unknown))
        raise ValueError(f"unknown placeholder {names}; known: {', '.join(sorted(PLACEHOLDERS))}")
    return text


def check_plain(text: str) -> str:
    """A plain template: known placeholders, and none inside JSON/YAML structure (use {json: …})."""
    check_template(text)
    if holes(text) and _structured(_HOLE.sub("x", text)):
        raise ValueError(
            f"{text[:60]!r}… is structured data with a placeholder in it: declare it as {{json: …}}"
        )
    return text


def _structured(text: str) -> bool:
    """True when ``text`` parses as a JSON/YAML mapping or list (flow style: braces or brackets)."""
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        return isinstance(yaml.safe_load(text), dict | list)
    except yaml.YAMLError:
        return False


def check_data(value: Any, where: str = "data") -> Any:
    """Placeholders only in scalar strings, never in keys; every placeholder known."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or holes(key):
                raise ValueError(f"{where}: key {key!r} must be plain text without placeholders")
            check_data(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_data(item, f"{where}[{i}]")
    elif isinstance(value, str):
        check_template(value)
    return value


def fill_data(value: Any, values: Mapping[str, str]) -> Any:
    """``value`` with placeholders filled in its scalar strings (the structure is untouched).

    A scalar that is exactly one port placeholder becomes a number, as a config expects a port:

    >>> fill_data({"port": "{api_port}", "url": "http://h:{port}/"}, {"api_port": "28000", "port": "18000"})
    {'port': 28000, 'url': 'http://h:18000/'}
    """
    if isinstance(value, dict):
        return {k: fill_data(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_data(v, values) for v in value]
    if (
        isinstance(value, str)
        and value.strip("{}") in INT_PLACEHOLDERS
        and value == f"{{{value.strip('{}')}}}"
    ):
        return int(values[value.strip("{}")])
    return fill(value, values) if isinstance(value, str) else value


def check_values(values: Mapping[str, str], profile: str) -> None:
    """A placeholder value with a control character (a line break in a path) is never filled in."""
    for name, value in values.items():
        if _CONTROL.search(value):
            raise LabError(f"engine profile {profile}: {{{name}}} = {value!r} has a control character")


def _file_name(name: str) -> str:
    if not _FILE_NAME.fullmatch(name) or RESERVED.fullmatch(name):
        raise ValueError(
            f"{name!r} must be a plain file name in the run directory: letters, digits and ._- "
            "(not starting with '.'; no '/'; not engine.pid or engine-N.log)"
        )
    return name


FileName = Annotated[str, AfterValidator(_file_name)]


class DataFile(Frozen):
    """A config file in a data format, built by a serializer from ``data``."""

    format: Literal["yaml", "json"]
    data: dict[str, Any]

    @field_validator("data")
    @classmethod
    def _placeholders(cls, v: dict[str, Any]) -> dict[str, Any]:
        return check_data(v)  # type: ignore[no-any-return]

    def render(self, values: Mapping[str, str]) -> str:
        data = fill_data(self.data, values)
        if self.format == "json":
            return json.dumps(data, indent=None)
        return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


class TextFile(Frozen):
    """A file without structure (a script, a list of words): a plain template."""

    format: Literal["text"]
    text: str

    @field_validator("text")
    @classmethod
    def _placeholders(cls, v: str) -> str:
        return check_template(v)

    def render(self, values: Mapping[str, str]) -> str:
        return fill(self.text, values)


FileSpec = Annotated[DataFile | TextFile, Field(discriminator="format")]


def as_file(name: str, spec: object) -> object:
    """A bare string is a text file; a data-format name with placeholders in its text is refused."""
    if isinstance(spec, str):
        spec = {"format": "text", "text": spec}
    text = str(spec.get("text", "")) if isinstance(spec, dict) and spec.get("format") == "text" else ""
    if holes(text) and name.lower().endswith(DATA_SUFFIXES):
        raise ValueError(
            f"{name}: a data-format file with placeholders must be declared as data (format: yaml/json)"
        )
    return spec


class JsonArg(Frozen):
    """A command-line argument that is a JSON document: ``{json: {...}}``, serialized compactly."""

    data: Any = Field(alias="json")

    @field_validator("data")
    @classmethod
    def _placeholders(cls, v: Any) -> Any:
        return check_data(v, "json")

    def render(self, values: Mapping[str, str]) -> str:
        return json.dumps(fill_data(self.data, values), separators=(",", ":"))


Arg = str | JsonArg


def render_arg(arg: Arg, values: Mapping[str, str]) -> str:
    """One argv element for the host."""
    return fill(arg, values) if isinstance(arg, str) else arg.render(values)
