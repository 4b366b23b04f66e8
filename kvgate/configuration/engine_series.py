"""Prometheus series names and labels as the text format writes them; pure, so profiles validate with it.

>>> selector('vllm:prompt_tokens_cached_by_source_total{source="disk"}')
('vllm:prompt_tokens_cached_by_source_total', {'source': 'disk'})
"""

from __future__ import annotations

import re

Labels = tuple[tuple[str, str], ...]

_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_SELECTOR = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?$")


def _unescape(value: str) -> str:
    return value.replace(r"\"", '"').replace(r"\n", "\n").replace("\\\\", "\\")


def labels(text: str | None) -> Labels:
    """``a="1",b="2"`` → sorted ``(name, value)`` pairs, unescaped."""
    if not text:
        return ()
    return tuple(sorted((m.group(1), _unescape(m.group(2))) for m in _LABEL.finditer(text)))


def selector(text: str) -> tuple[str, dict[str, str]]:
    """A series selector as Prometheus writes it: ``name`` or ``name{label="value",...}``."""
    m = _SELECTOR.match(text.strip())
    body = m.group(2) if m else None
    if m is None or (body is not None and "".join(x.group(0) for x in _LABEL.finditer(body)) != body):
        raise ValueError(f'not a series selector: {text!r} (want name or name{{label="value"}})')
    return m.group(1), dict(labels(m.group(2)))
