"""G4 drift judged as slopes over every window, with plateau detection and an interval (pure)."""

from __future__ import annotations

from typing import Any

import pytest
from test_g4_trends import SMOKE, window

from kvgate.base.criteria import Inputs, Verdict
from kvgate.configuration.gate_profiles.g4 import load_g4_profile
from kvgate.orchestration.g4 import drift
from kvgate.orchestration.g4.plan import SLOPES, criteria, g4_check

FULL = load_g4_profile("full")  # 10-minute windows, warm-up 3, baseline 6


def judged(windows: list[dict[str, Any]], key: str, profile: Any = SMOKE, cap: int | None = None) -> Any:
    (fig,) = [f for f in drift.drift(windows, profile, cap) if f["key"] == key]
    crit = dict(criteria(profile))[key]
    check = g4_check("h", "d", f"soak[d].{key}", key, crit, ruled=None)
    return check.evaluate(Inputs({key: drift.measurement(fig, ())})).verdict, fig


def hourly(n: int, **series: Any) -> list[dict[str, Any]]:
    """``n`` 10-minute windows; each keyword maps a window field to a function of the hour."""
    out = []
    for i in range(n):
        w = window(i, start_unix_s=1000.0 + 600 * i, end_unix_s=1600.0 + 600 * i)
        h = (i + 1) / 6
        for field, f in series.items():
            if field == "rss_mib":
                w["rss_kib"] = int(f(h, i) * 1024)
            elif field == "cache":
                w["cache_dir_bytes"] = int(f(h, i))
            else:
                w["summary"] = w["summary"] | {field: f(h, i)}
        out.append(w)
    return out


def test_the_demo_leak_that_passed_as_89_mib_fails_as_6816_mib_per_hour() -> None:
    # six 20-s windows, RSS rising 6,816 MiB/h: first-against-last (after warm-up) was 89 MiB ≤ 200
    leak = [window(i, rss_kib=int((1200 + 6816 * (20 * (i + 1)) / 3600) * 1024)) for i in range(6)]
    verdict, fig = judged(leak, "memory-growth")
    assert verdict is Verdict.FAIL
    assert fig["growth_per_h"] == pytest.approx(6816, rel=0.01)
    assert fig["projected_72h"] == pytest.approx(1200 + 6816 * 72, rel=0.01)  # the host is full long before


def test_growth_that_levels_off_is_a_plateau_judged_by_its_tail() -> None:
    filling = hourly(48, rss_mib=lambda h, i: 1000 + min(h, 5) * 400)  # +400 MiB/h for 5 h, then flat
    verdict, fig = judged(filling, "memory-growth", FULL)
    assert fig["plateau"] is True
    assert fig["judged_on"] == "tail"
    assert fig["whole_per_h"] > FULL.limits.max_rss_growth_mib_per_h
    assert verdict is Verdict.PASS


def test_one_outlier_window_does_not_carry_a_throughput_that_keeps_falling() -> None:
    falling = hourly(24, output_throughput_tok_per_s=lambda h, i: 3000 if i == 23 else 100 * (1 - 0.02 * h))
    verdict, fig = judged(falling, "throughput-retention", FULL)
    assert verdict is Verdict.FAIL  # −2 %/h against a 0.15 %/h limit, the last window's 30× spike aside
    assert fig["growth_per_h"] == pytest.approx(0.02 / (1 - 0.02 * 0.5), rel=0.1)  # of the first windows'


def test_a_steady_soak_passes_every_slope() -> None:
    steady = hourly(432, rss_mib=lambda h, i: 1000 + (i % 2), p99_ttft_ms=lambda h, i: 150 + (i % 3))
    for key in ("memory-growth", "ttft-drift", "throughput-retention"):
        assert judged(steady, key, FULL)[0] is Verdict.PASS, key


def test_a_slope_too_noisy_to_tell_is_invalid_never_pass() -> None:
    noisy = [window(i, summary={"p99_ttft_ms": [150, 400, 90, 500, 120, 600][i]}) for i in range(6)]
    verdict, fig = judged(noisy, "ttft-drift")
    assert verdict is Verdict.INVALID
    assert "too short or too noisy" in fig["invalid"]


def test_a_tier_that_reaches_its_cap_before_72_h_fails_and_one_that_holds_passes() -> None:
    cap = 100 << 30
    growing = hourly(24, cache=lambda h, i: (1 << 30) * (1 + h))  # +1 GiB/h: the cap at ~99 h? no: 72 h + 4
    verdict, fig = judged(growing, "tier-growth", FULL, cap)
    assert fig["projected_72h"] == pytest.approx(74 / 100, rel=0.02)
    assert verdict is Verdict.PASS
    faster = hourly(24, cache=lambda h, i: (2 << 30) * (1 + h))
    assert judged(faster, "tier-growth", FULL, cap)[0] is Verdict.FAIL  # 146 % of its cap at 72 h


def test_too_few_windows_for_a_slope_is_invalid() -> None:
    verdict, fig = judged([window(i) for i in range(3)], "memory-growth")
    assert verdict is Verdict.INVALID
    assert "too few for a slope" in fig["invalid"]


def test_a_soak_shorter_than_the_slope_span_shows_its_slopes_without_judging_them() -> None:
    """Two minutes of a warming engine are no hourly rate: the demo's G4 once FAILed (or was INVALID)
    on the RSS of an engine still filling its caches; the smoke profile now says why it is not judged."""
    why = SMOKE.too_short_for_slopes()
    assert why is not None
    assert "120 s cannot establish an hourly slope" in why
    assert FULL.too_short_for_slopes() is None  # 72 h
    assert set(SLOPES) <= {key for key, _ in criteria(SMOKE)}
