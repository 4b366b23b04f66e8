"""Clock facts: `chronyc -c tracking` (offset to NTP), else `timedatectl show` (sync flag only).

chronyc's CSV: refid, name, stratum, ref time, system time (s), last offset,
RMS offset, frequency, residual freq, skew, root delay, root dispersion,
update interval, leap status — 14 fields in every release since `-c` came in
(chrony 3.0; client.c's tracking report is unchanged up to 4.8). "System time" is
the correction chrony applies: positive when the system clock is slow of NTP.
Reference 7F7F0101 with no name is chrony's local mode, which its manual says is
"not synchronised to any external source". timedatectl cannot measure an offset,
so with it `offset_ms` stays None and an offset check cannot PASS.

>>> parse_chronyc_tracking("A9FEA97B,169.254.169.123,4,1553630752.756016394,0.000042,"
...     "-0.000048721,0.000203645,-3.485,-0.022,0.079,0.000577283,0.000112625,775.8,Normal\\n")["offset_ms"]
0.042
"""

from __future__ import annotations

from typing import Any

from kvgate.probes.facts.base import Collected, HostContext, ParseError, has_tool, number, run_parsed
from kvgate.transport import Executor

FIELDS = 14
NOT_SYNCED = "Not synchronised"
LOCAL_REFID = "7F7F0101"


def _ms(value: str, what: str) -> float:
    return round(number(value, "chronyc tracking", what) * 1000.0, 6)


def parse_chronyc_tracking(text: str) -> dict[str, Any]:
    """Offset to NTP (chrony's correction, ms: positive = system slow), stratum, reference, leap status."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    cells = [c.strip() for c in line.split(",")]
    if len(cells) != FIELDS:
        raise ParseError("chronyc tracking", f"one CSV line of {FIELDS} fields (chronyc -c tracking)", text)
    offset = _ms(cells[4], "system time")
    local = cells[0] == LOCAL_REFID and not cells[1]
    return {
        "source": "chrony",
        "reference": f"local clock ({LOCAL_REFID})" if local else cells[1] or cells[0],
        "stratum": int(number(cells[2], "chronyc tracking", "stratum")),
        "offset_ms": offset,
        "abs_offset_ms": abs(offset),
        "last_offset_ms": _ms(cells[5], "last offset"),
        "rms_offset_ms": _ms(cells[6], "RMS offset"),
        "leap_status": cells[13],
        "synchronised": cells[13] != NOT_SYNCED and not local,
        "unsynchronised_reason": _unsynchronised(cells[13], local=local),
    }


def _unsynchronised(leap_status: str, *, local: bool) -> str | None:
    if local:
        return f"chrony follows its own local clock (reference {LOCAL_REFID}): no external time source"
    return f"chrony leap status {leap_status!r}: not synchronised" if leap_status == NOT_SYNCED else None


def parse_timedatectl(text: str) -> dict[str, Any]:
    """NTP enabled/synchronised flags from `timedatectl show` (KEY=value lines)."""
    pairs = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    if "NTPSynchronized" not in pairs:
        raise ParseError("timedatectl show", "an NTPSynchronized=yes|no line", text)
    return {
        "source": "timedatectl",
        "offset_ms": None,
        "abs_offset_ms": None,
        "synchronised": pairs["NTPSynchronized"].strip() == "yes",
        "ntp_enabled": pairs.get("NTP", "").strip() == "yes",
        "timezone": pairs.get("Timezone"),
    }


def _timedatectl(ex: Executor, col: Collected) -> None:
    if not has_tool(ex, "timedatectl"):
        col.missing_tools.append("timedatectl")
        return
    col.facts.update(
        run_parsed(ex, col, "timedatectl", parse_timedatectl, "timedatectl show", timeout_s=10) or {}
    )


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """chrony's tracking when chronyd answers; timedatectl's sync flag otherwise."""
    del ctx  # nothing host-specific to pass
    col = Collected()
    if not has_tool(ex, "chronyc"):
        col.missing_tools.append("chronyc")
    else:
        tracking = run_parsed(ex, col, "chronyc", parse_chronyc_tracking, "chronyc -c tracking", timeout_s=10)
        col.facts.update(tracking or {})
    if "offset_ms" not in col.facts:
        _timedatectl(ex, col)
    return col
