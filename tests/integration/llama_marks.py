"""Marks of the G3 tests that drive the real llama.cpp engine (llama-cpp-python, `make engine`)."""

from __future__ import annotations

import importlib.util

import pytest

LLAMA_ENGINE = [
    pytest.mark.engine,
    pytest.mark.slow,
    pytest.mark.timeout(1800),  # a hang guard above run_cli's: G3 smoke runs every arm, capacity included
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None, reason="engine not installed: make engine"
    ),
]
