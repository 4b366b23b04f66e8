"""Numbers for people: SI units at a sensible precision (2.77 GB/s, 9.3 ms, 41 %).

The run record keeps raw values (bytes per second, nanoseconds); the report shows
them converted here, once, and never in e-notation.

>>> human(1.36e9, "B/s"), human(2_400_000, "ns"), human(0.0934, "s"), human(0.12, "ratio")
('1.36 GB/s', '2.4 ms', '93.4 ms', '12 %')
"""

from __future__ import annotations

import re

# unit → (scale to the base unit, base unit, SI ladder of (factor, prefix-unit))
_LADDERS: dict[str, tuple[float, tuple[tuple[float, str], ...]]] = {
    "B/s": (1.0, ((1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1.0, "B/s"))),
    "B": (1.0, ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "B"))),
    "s": (1.0, ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))),
    "ms": (1e-3, ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))),
    "ns": (1e-9, ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))),
}
_PERCENT_UNITS = ("ratio", "fraction")


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, never in e-notation: 1355 → '1,355', 0.0934 → '0.0934'."""
    if value == 0 or not abs(value) < float("inf"):
        return f"{value:g}"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    text = f"{value:.{digits}g}"
    if "e" in text:  # tiny values: fixed point with enough decimals
        text = f"{value:.{digits + 6}f}".rstrip("0")
    return text


def cell(value: float | None, scale: float = 1.0, digits: int = 3) -> str:
    """A table's number: ``value / scale`` to ``digits`` significant figures (0: whole), a dash for none.

    >>> cell(3050.2, 1), cell(0.09623), cell(2048.0, digits=0), cell(None)
    ('3,050', '0.0962', '2048', '—')
    """
    if value is None:
        return "—"
    scaled = value / scale
    return significant(scaled, digits) if digits else f"{scaled:.0f}"


def plain(value: object) -> str:
    """A non-number: None as a dash, booleans as yes/no, anything else as its text."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def human(value: object, unit: str = "", *, metric: str = "") -> str:
    """One value with its unit as a person reads it; non-numbers as plain text."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return plain(value)
    if unit in _PERCENT_UNITS or (not unit and metric.endswith("_cv")):
        return f"{significant(value * 100, 2)} %"
    if unit in _LADDERS:
        scale, ladder = _LADDERS[unit]
        base = value * scale
        factor, shown = next(((f, u) for f, u in ladder if abs(base) >= f), ladder[-1])
        return f"{significant(base / factor)} {shown}"
    if unit == "x":
        return f"{significant(value)}×"
    return f"{significant(value)} {unit}".strip()


def margin(measured: object, expected: object, comparator: str) -> str:
    """How far a number is from its threshold, in the direction that matters: '+12 % above the floor'."""
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (measured, expected)):
        return ""
    m, e = float(measured), float(expected)  # type: ignore[arg-type]
    if e == 0 or comparator not in (">=", ">", "<=", "<"):
        return ""
    change = (m - e) / abs(e) * 100
    side = "above the floor" if comparator.startswith(">") else "below the ceiling"
    if (change < 0) == comparator.startswith(">"):
        side = "short of the floor" if comparator.startswith(">") else "over the ceiling"
    return f"{significant(abs(change), 2)} % {side}"


_RAW = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?) ?(B/s|ns|B)(?![\w/])")


_E_NOTATION = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?e[+-]?\d+(?![\w.])")


def humanize_text(text: str) -> str:
    """Raw numbers inside a condition string for people: bytes and nanoseconds in SI units, and
    no e-notation left (``iops=8.848e+04 IOPS`` → ``iops=88,480 IOPS``)."""
    text = _RAW.sub(lambda m: human(float(m.group(1)), m.group(2)), text)
    return _E_NOTATION.sub(lambda m: significant(float(m.group(0)), 4), text)


def duration(seconds: float) -> str:
    """A run's length as people say it: '9.3 s', '7 min 24 s', '72 h 0 min'."""
    if seconds < 120:
        return human(seconds, "s")
    minutes, sec = divmod(round(seconds), 60)
    if minutes < 120:
        return f"{minutes} min {sec} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
