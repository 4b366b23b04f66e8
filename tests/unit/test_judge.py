"""The judge: one pure function, readable conditions, never PASS without a trusted value."""

import pytest

from kvgate.base.criteria import Criterion, Measurement, Verdict, judge, skipped, worst


def crit(comparator: str, expected: object, **kw: object) -> Criterion:
    return Criterion(rule="T-1", metric="x_units", comparator=comparator, expected=expected, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("comparator", "expected", "value", "verdict"),
    [
        (">=", 64, 64, Verdict.PASS),
        (">=", 64, 63, Verdict.FAIL),
        ("<=", 70, 71.5, Verdict.FAIL),
        ("==", 0, 0, Verdict.PASS),
        ("==", 0, 3, Verdict.FAIL),
        ("matches", r"EPYC 9\d{3}", "AMD EPYC 9654 96-Core Processor", Verdict.PASS),
        ("matches", r"EPYC 9\d{3}", "Intel Xeon", Verdict.FAIL),
        ("version>=", "3.28", "fio-3.33", Verdict.PASS),
        ("version>=", "3.28", "fio-3.9", Verdict.FAIL),  # numeric, not lexical
        ("in", ["up"], "down", Verdict.FAIL),
    ],
)
def test_comparators(comparator: str, expected: object, value: object, verdict: Verdict) -> None:
    assert judge(crit(comparator, expected), Measurement("x_units", value)).verdict is verdict  # type: ignore[arg-type]


def test_tolerance_is_relative_and_shown() -> None:
    c = crit("==", 2048, unit="GiB", tolerance=0.03)
    ok = judge(c, Measurement("x_units", 2003.5))
    assert ok.verdict is Verdict.PASS
    assert ok.condition == "x_units=2004 GiB = 2048 GiB (±3%)"
    assert judge(c, Measurement("x_units", 1900)).verdict is Verdict.FAIL


def test_condition_reads_like_the_report_row() -> None:
    c = Criterion(rule="G1-CPU-2", metric="cpu_cores", comparator=">=", expected=64)
    assert judge(c, Measurement("cpu_cores", 32)).condition == "cpu_cores=32 ≥ 64"


def test_missing_value_is_invalid_never_pass() -> None:
    j = judge(crit(">=", 1), None)
    assert j.verdict is Verdict.INVALID
    assert "not measured" in j.condition
    assert judge(crit(">=", 1), Measurement("x_units", None)).verdict is Verdict.INVALID


def test_untrusted_value_is_invalid_even_when_in_spec() -> None:
    m = Measurement("x_units", 5.2, invalid_reason="device read 0 bytes: page cache served the read")
    j = judge(crit(">=", 1), m)
    assert j.verdict is Verdict.INVALID
    assert "page cache" in j.condition


def test_incomparable_types_are_invalid() -> None:
    assert judge(crit(">=", 1), Measurement("x_units", "fast")).verdict is Verdict.INVALID


def test_unknown_comparator_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown comparator"):
        judge(crit("~", 1), Measurement("x_units", 1))


def test_skip_and_worst() -> None:
    assert skipped(crit(">=", 1), "no GPUs declared").verdict is Verdict.SKIP
    assert worst([Verdict.PASS, Verdict.INVALID, Verdict.SKIP]) is Verdict.INVALID
    assert worst([Verdict.PASS, Verdict.FAIL, Verdict.ERROR]) is Verdict.FAIL
    assert worst([]) is Verdict.ERROR  # nothing evaluated is never a pass
