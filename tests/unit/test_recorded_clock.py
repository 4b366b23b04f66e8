"""`chronyc -c tracking` as chrony 3.5, 4.3 and 4.8 print it (tests/data/recorded/PROVENANCE.md).

The captured files come from real chronyd pairs run here with `-x` (one on its local
clock, one following it); every value asserted was read off the file by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from replay import ok
from test_g1_plan import TOOLS, run_g1, scratch  # noqa: F401 (scratch is a fixture run_g1 needs)

from kvgate.base.criteria import Verdict
from kvgate.probes.facts.base import ParseError
from kvgate.probes.facts.clock import parse_chronyc_tracking, parse_timedatectl

DATA = Path(__file__).parents[1] / "data" / "recorded" / "chronyc"


def tracking(name: str) -> dict[str, object]:
    return parse_chronyc_tracking((DATA / name).read_text())


@pytest.mark.parametrize(
    ("name", "offset_ms", "rms_ms"),
    [
        ("captured-chrony-4.8-client-of-local-server.csv", -0.0017, 0.000045),
        ("captured-chrony-4.3-client-of-local-server.csv", -0.001665, 0.000022),
        ("captured-chrony-3.5-client-first-update.csv", -0.001111, 0.000345),
    ],
)
def test_a_client_reads_the_same_fourteen_fields_from_3_5_to_4_8(
    name: str, offset_ms: float, rms_ms: float
) -> None:
    clock = tracking(name)
    assert (clock["reference"], clock["stratum"], clock["leap_status"]) == ("127.0.0.1", 9, "Normal")
    assert clock["offset_ms"] == pytest.approx(offset_ms)
    assert clock["rms_offset_ms"] == pytest.approx(rms_ms)
    assert clock["synchronised"] is True
    assert clock["unsynchronised_reason"] is None


def test_an_ipv6_source_is_named_by_its_address_not_its_hashed_refid() -> None:
    clock = tracking("captured-chrony-4.8-client-of-ipv6-server.csv")
    assert (clock["reference"], clock["stratum"], clock["synchronised"]) == ("::1", 9, True)
    assert clock["offset_ms"] == pytest.approx(-0.002127)


def test_the_offset_keeps_chronys_sign_positive_when_the_system_clock_is_slow() -> None:
    """chronyc's text form of the same client says 'fast' where the CSV holds a negative value."""
    text = (DATA / "captured-chrony-4.8-client-of-local-server-text.txt").read_text()
    assert "System time     : 0.000001700 seconds fast of NTP time" in text
    assert tracking("captured-chrony-4.8-client-of-local-server.csv")["offset_ms"] == pytest.approx(-0.0017)


@pytest.mark.parametrize("version", ["4.3", "4.8"])
def test_a_daemon_without_a_source_yet_is_not_synchronised(version: str) -> None:
    clock = tracking(f"captured-chrony-{version}-unsynchronised.csv")
    assert (clock["reference"], clock["stratum"], clock["offset_ms"]) == ("00000000", 0, 0.0)
    assert clock["synchronised"] is False
    assert clock["unsynchronised_reason"] == "chrony leap status 'Not synchronised': not synchronised"


@pytest.mark.parametrize("version", ["3.5", "4.3", "4.8"])
def test_chronys_local_mode_is_not_an_external_time_source(version: str) -> None:
    """Refid 7F7F0101 without a name, leap status Normal: main called this host synchronised."""
    clock = tracking(f"captured-chrony-{version}-local-reference.csv")
    assert (clock["stratum"], clock["leap_status"], clock["offset_ms"]) == (8, "Normal", 0.0)
    assert clock["reference"] == "local clock (7F7F0101)"
    assert clock["synchronised"] is False


def test_g1_does_not_pass_the_clock_of_a_host_on_its_own_local_clock(scratch: tuple[Path, str]) -> None:  # noqa: F811
    """main judged this PASS (abs_offset_ms=0 ≤ 5 ms) although no NTP server is followed."""
    local = {"chronyc -c tracking": ok("chronyc/captured-chrony-4.8-local-reference.csv")}
    verdict, condition = run_g1(scratch, replace=local)["clock.offset"]
    assert verdict is Verdict.INVALID
    assert "chrony follows its own local clock (reference 7F7F0101): no external time source" in condition


def test_a_line_cut_before_the_leap_status_is_refused_not_read_shifted() -> None:
    """Thirteen fields: main inserted an empty name and took the ref time as the offset (1.8e12 ms)."""
    line = (DATA / "captured-chrony-4.3-client-of-local-server.csv").read_text().strip()
    cut = line.rsplit(",", 1)[0]
    with pytest.raises(ParseError, match="chronyc tracking: expected one CSV line of 14 fields"):
        parse_chronyc_tracking(cut + "\n")


def test_timedatectl_on_a_host_not_booted_with_systemd_is_a_clean_invalid(scratch: tuple[Path, str]) -> None:  # noqa: F811
    """systemd 252's real refusal in a container: no NTPSynchronized line, so no verdict."""
    refusal = (DATA.parent / "timedatectl" / "debian12-kvm-no-systemd-stderr.txt").read_text()
    with pytest.raises(ParseError, match=r"timedatectl show: expected an NTPSynchronized=yes\|no line"):
        parse_timedatectl(refusal)
    tools = TOOLS - {"chronyc"} | {"timedatectl"}
    verdict, condition = run_g1(scratch, tools=tools, replace={"timedatectl show": (1, "", refusal)})[
        "clock.offset"
    ]
    assert verdict is Verdict.INVALID
    assert "Failed to connect to bus: Host is down" in condition
