"""Waivers turn FAIL/INVALID into WAIVED only for the matching rule, host and date."""

from datetime import date
from pathlib import Path

import pytest

from kvgate.base.criteria import Criterion, Measurement, Verdict, judge
from kvgate.base.errors import ConfigError
from kvgate.configuration.waivers import Waiver, Waivers, load_waivers

FAIL = judge(Criterion("G1-NVME-4", "temperature_c", "<=", 70), Measurement("temperature_c", 74))
REASON = "array firmware update scheduled"


def test_matching_waiver_records_reason_and_approver() -> None:
    ws = Waivers(waivers=(Waiver(rule="G1-NVME-4", hosts=("gpu-*",), reason=REASON, approver="J. Doe"),))
    j, w = ws.apply("gpu-1", "nvme[nvme0].temperature", FAIL)
    assert j.verdict is Verdict.WAIVED
    assert w == {"reason": REASON, "approver": "J. Doe", "was": "FAIL"}
    assert ws.apply("ctl-1", "nvme[nvme0].temperature", FAIL)[0].verdict is Verdict.FAIL


def test_expired_or_other_rule_does_not_apply() -> None:
    expired = Waiver(rule="G1-NVME-4", reason=REASON, approver="J. Doe", expires=date(2020, 1, 1))
    other = Waiver(rule="G1-CPU-1", reason=REASON, approver="J. Doe")
    assert Waivers(waivers=(expired, other)).apply("h", "c", FAIL)[0].verdict is Verdict.FAIL


def test_pass_is_never_turned_into_waived() -> None:
    ok = judge(Criterion("G1-NVME-4", "temperature_c", "<=", 70), Measurement("temperature_c", 40))
    ws = Waivers(waivers=(Waiver(rule="G1-NVME-4", reason=REASON, approver="J. Doe"),))
    assert ws.apply("h", "c", ok) == (ok, None)


def test_waiver_file_errors_are_clear(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("waivers:\n  - rule: G1-X\n    reason: short\n    approver: Jo\n")
    with pytest.raises(ConfigError) as err:
        load_waivers(f)
    assert "waivers[0].reason" in str(err.value)
    assert load_waivers(None).waivers == ()
