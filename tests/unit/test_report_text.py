"""Text for people: SI units, wrap points only between tokens, engine text repaired and safe."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvgate.base.criteria import Verdict
from kvgate.report.html import breakable
from kvgate.report.model import CheckRow
from kvgate.report.numbers import duration, human, humanize_text, margin
from kvgate.report.parts import printable
from kvgate.report.summary import margin_text


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (1.3551e9, "B/s", "1.36 GB/s"),
        (2_400_000, "ns", "2.4 ms"),
        (0.0934, "s", "93.4 ms"),
        (17697.0, "IOPS", "17,697 IOPS"),
        (3.0, "x", "3×"),
        (None, "", "—"),
        (True, "", "yes"),
    ],
)
def test_numbers_read_as_people_write_them(value: object, unit: str, shown: str) -> None:
    assert human(value, unit) == shown


def test_a_cv_is_a_percentage_and_a_margin_says_its_side() -> None:
    assert human(1.184, "", metric="randread-4k.read_bw_bytes_per_s_cv") == "118 %"
    assert margin(1.3e9, 1e9, ">=") == "30 % above the floor"
    assert margin(81.5, 70, "<=") == "16 % over the ceiling"
    assert humanize_text("bw=1.355e+09 B/s > 0 B/s") == "bw=1.35 GB/s > 0 B/s"
    assert humanize_text("read_iops=8.848e+04 IOPS > 0 IOPS") == "read_iops=88,480 IOPS > 0 IOPS"
    assert humanize_text("cv=1.2e-05 ≤ 0.1") == "cv=0.000012 ≤ 0.1"
    assert duration(444) == "7 min 24 s"


def test_wrap_points_fall_between_tokens_never_inside_a_word_or_number() -> None:
    out = str(breakable("localhost/tiny-llama.ssd-restore 0.0962/2 ↓26–32% <b>"))
    assert "localhost/<wbr>" in out
    assert '<span class="nobr">tiny-llama</span>' in out  # a hyphenated name stays whole
    assert "0.0962/2" in out  # no wrap point between digits
    assert '<span class="nobr">↓26–32%</span>' in out
    assert "&lt;b&gt;" in out  # still escaped


def test_a_g3_check_id_may_wrap_after_its_deployment() -> None:
    """'engine[tiny-llama].ttft-p50-reduction' ran into the next column of a real G3 report's findings."""
    out = str(breakable("localhost/engine[tiny-llama].ttft-p50-reduction"))
    assert 'engine[<span class="nobr">tiny-llama</span>].<wbr>' in out


def test_engine_text_is_repaired_once_and_control_characters_replaced() -> None:
    assert printable("cafÃ© â€™") == "café ’"
    assert printable("café Größe") == "café Größe"  # correct text is left alone
    assert printable("red \x1b[31m \x02\x02 painter") == "red ␛[31m ␂␂ painter"  # seen, not garbage


def test_a_passed_check_without_a_margin_says_what_it_said_beside_its_figure() -> None:
    """'correctness 0 requests PASS' in the passed checks' table, while 44 outputs were compared and 2 only
    differed at a near-tie: said in the condition, three pages on."""
    said = ("of 44 outputs compared: 4 restored or warm against recompute's, 40 under load", "2 near-ties")
    row = CheckRow("h/c", "h", "c", Verdict.PASS, metric="output_mismatches", comparator="==", said=said)
    assert margin_text(replace(row, expected_value=0, measured_value=0)) == "; ".join(said)
    passed = replace(row, comparator=">=", expected_value=0.9, measured_value=1.0, said=())
    assert margin_text(passed) == "11 % above the floor"  # a distance, where it has one
