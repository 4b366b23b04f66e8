"""Numbers for people: SI units at a sensible precision (2.77 GB/s, 9.3 ms, 41 %).

The run record keeps raw values (bytes per second, nanoseconds); the report shows
them converted here, once, and never in e-notation.

>>> human(1.36e9, "B/s"), human(2_400_000, "ns"), human(0.0934, "s"), human(0.12, "ratio")
('1.36 GB/s', '2.4 ms', '93.4 ms', '12 %')
"""

from __future__ import annotations

import math
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
RATIO_DIGITS = 4  # significant figures of a ratio ("x"): as the verdict tables print it


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, never in e-notation: 1355 → '1,355', 0.0934 → '0.0934'.

    >>> significant(0.000023749), significant(-1.5e-7, 2)
    ('0.0000237', '-0.00000015')
    """
    if value == 0 or not abs(value) < float("inf"):
        return f"{value:g}"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    text = f"{value:.{digits}g}"
    if "e" in text:  # tiny values: fixed point, as many decimals as the significant figures need
        decimals = digits - 1 - math.floor(math.log10(abs(value)))
        text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
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
    if unit == "x":  # a ratio near its bound (1.005 against 0.9) needs its fourth figure: "1×" hid it
        return f"{significant(value, RATIO_DIGITS)}×"
    return f"{significant(value)} {unit}".strip()


def margin(measured: object, expected: object, comparator: str, *, unit: str = "", metric: str = "") -> str:
    """How far a number is from its threshold, in the direction that matters: '12 % above the floor';
    a percentage's distance in percentage points, never a percentage of a percentage.

    >>> margin(96, 64, ">="), margin(0.33, 1.0, "<=", unit="ratio"), margin(95.0, 25.5, ">=", unit="%")
    ('50 % above the floor', '67 percentage points below the ceiling', '70 percentage points above the floor')
    >>> margin(1.0349, 0.9, ">=", unit="x"), margin(1.0259, 0.5, ">=", unit="x"), margin(1.0, 1, ">=")
    ('15 % above the floor', '105 % above the floor', 'on the floor')
    """
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (measured, expected)):
        return ""
    # from the numbers as printed (human): 1.035× against 0.9× reads "15 %", 1.026× against 0.5× "105 %"
    digits = RATIO_DIGITS if unit == "x" else 3
    m, e = (float(significant(float(v), digits).replace(",", "")) for v in (measured, expected))  # type: ignore[arg-type]
    points = percent_scale(unit, metric)
    if (e == 0 and not points) or comparator not in (">=", ">", "<=", "<"):
        return ""
    change = (m - e) * points if points else (m - e) / abs(e) * 100
    if change == 0:
        return "on the floor" if comparator.startswith(">") else "at the ceiling"
    side = "above the floor" if comparator.startswith(">") else "below the ceiling"
    if (change < 0) == comparator.startswith(">"):
        side = "short of the floor" if comparator.startswith(">") else "over the ceiling"
    return f"{significant(abs(change), 2)} {'percentage points' if points else '%'} {side}"


def percent_scale(unit: str, metric: str) -> float:
    """Percentage points per unit of a percentage quantity (100 for a fraction, 1 for %); 0 for others."""
    if unit in _PERCENT_UNITS or (not unit and metric.endswith("_cv")):
        return 100.0
    return 1.0 if unit == "%" or (not unit and metric.endswith("_pct")) else 0.0


_RAW = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?) ?(B/s|ns|B)(?![\w/])")


_E_NOTATION = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?e[+-]?\d+(?![\w.])")


def humanize_text(text: str) -> str:
    """Raw numbers inside a condition string for people: bytes and nanoseconds in SI units, and
    no e-notation left (``iops=8.848e+04 IOPS`` → ``iops=88,480 IOPS``)."""
    text = _RAW.sub(lambda m: human(float(m.group(1)), m.group(2)), text)
    return _E_NOTATION.sub(lambda m: significant(float(m.group(0)), 4), text)


# The seed article as gates/references.yaml names its file ("seed: 000_994578b198b8e21d.txt").
_SEED_FILE = re.compile(r"seed: \d{3}_[0-9a-f]{16}\.txt")


def cited(text: str) -> str:
    """A source for people: the seed article by what it is, not by its file name in kvgate's tree."""
    return _SEED_FILE.sub("the seed article", text)


def duration(seconds: float) -> str:
    """A run's length as people say it: '9.3 s', '7 min 24 s', '10 min', '72 h'.

    >>> duration(9.3), duration(444), duration(600), duration(72 * 3600), duration(7500)
    ('9.3 s', '7 min 24 s', '10 min', '72 h', '2 h 5 min')
    """
    if seconds < 120:
        return human(seconds, "s")
    minutes, sec = divmod(round(seconds), 60)
    if minutes < 120:
        return f"{minutes} min {sec} s" if sec else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


DISAGREE_CV = 0.5  # repeats or trials whose CV is past this lie far apart: their mean is no steady figure
