"""Marks of the G3 tests that drive the real llama.cpp engine (llama-cpp-python, `make engine`)."""

from __future__ import annotations

import importlib.util

import pytest

LLAMA_ENGINE = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="engine not installed: make engine"
    ),
]
