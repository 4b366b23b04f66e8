"""The suite's own shape: pytest imports test modules by basename (no packages under tests/), so two
modules of one name in different folders stop the whole collection — as tests/lab/test_g4_faults.py
beside tests/integration/test_g4_faults.py once did, after each ran green on its own."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
