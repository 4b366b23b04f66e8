"""An all-zero SMART log (temperature 0 K) is no health report (nvme-cli #1645, #2759; SPDK #493).

Those threads show `nvme smart-log` returning every field as 0 — "temperature : -273 C" — on
FreeBSD 13.1 (nvme-cli 1.8.1), on Arch in 2025 and through SPDK's nvme-cli; they paste the text
form only, so the JSON here is the recorded netdata smart-log with every value set to 0, in the
test code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_g1_plan import run_g1, scratch  # noqa: F401 (scratch is a fixture run_g1 needs)

from kvgate.base.criteria import Verdict
from kvgate.probes.facts.base import ParseError
from kvgate.probes.facts.nvme import parse_smart_log

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "nvme" / "smart-log"


def zeroed(name: str) -> str:
    """The recorded log with every value 0, in the recording's own number type."""
    doc: dict[str, Any] = json.loads((RECORDED / name).read_text())
    return json.dumps({k: type(v)(0) if not isinstance(v, str) else "0" for k, v in doc.items()})


@pytest.mark.parametrize(
    "name",
    [
        "netdata-nvme-smart-log.json",
        "netdata-nvme-smart-log-string.json",
        "netdata-nvme-smart-log-float.json",
    ],
)
def test_a_temperature_of_zero_kelvin_is_refused_not_read_as_minus_273_c(name: str) -> None:
    with pytest.raises(ParseError, match="nvme smart-log: expected a temperature above 0 K"):
        parse_smart_log(zeroed(name))


def test_g1_judges_an_all_zero_smart_log_invalid_not_healthy(scratch: tuple[Path, str]) -> None:  # noqa: F811
    """main passed this drive: -273.15 °C ≤ 70 °C, no critical warning, no media errors."""
    blank = {"nvme smart-log /dev/nvme1n1": (0, zeroed("netdata-nvme-smart-log.json"), "")}
    results = run_g1(scratch, replace=blank)
    for check in ("nvme.temperature", "nvme.media_errors", "nvme.critical_warning"):
        verdict, condition = results[check]
        assert verdict is Verdict.INVALID, (check, condition)
        assert "temperature above 0 K" in condition
