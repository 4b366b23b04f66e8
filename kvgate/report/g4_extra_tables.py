"""G4's evidence tables beside the windows and verdicts: drift as slopes, the integrity load, health.

Laid out from what G4 stored per host/deployment (``g4_rows``: ``drift``, ``integrity``,
``health``; kvgate.orchestration.g4.report_rows); nothing is fitted or judged here.

>>> utc(0)
'1970-01-01 00:00:00'
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence

from kvgate.base.units import MB
from kvgate.record import (
    DriftFigure,
    G4Row,
    HealthFigures,
    IntegrityFailure,
    IntegrityFigures,
    KernelLine,
    Section,
)
from kvgate.report.numbers import cell
from kvgate.report.tables import table

INTEGRITY_COLUMNS = [
    "host/engine",
    "volume",
    "cycles",
    "share declared MB/s",
    "integrity MB/s measured",
    "of the device's bytes",
    "fio blocks verified MB",
    "checkpoint + KV cells verified MB",
    "agent CPU % of a core",
    "failures",
]
FAILURE_COLUMNS = [
    "host/engine",
    "kind",
    "volume",
    "file",
    "offset",
    "first seen (UTC)",
    "windows",
    "seen",
    "detail",
]
INTEGRITY_NOTE = (
    "Beside the engines, on the candidate volume, every cycle: fio's file of the previous cycle verified at "
    "rest (crc32c per block, its verify state loaded), then written anew and read back; a checkpoint written "
    "with fsync and every cell read back against its checksum; every KV chunk (written once at the start) "
    "restored and compared. A mismatch or I/O error is kept once per place with the time it was first seen "
    "and the windows it was seen in; nothing is retried. Its I/O is paced to the share the G4 profile "
    "declares (integrity.max_bytes_per_s); 'of the device's bytes' is its bytes over the device counters' "
    "bytes in the same windows (engines and integrity together); where it moved more than the device "
    "counted, part of its reads came from the page cache or fell outside the windows, so no share is given. "
    "Agent CPU excludes fio's own."
)
DRIFT_COLUMNS = [
    "host/engine",
    "series",
    "fitted slope per hour (95 %)",
    "limit per hour",
    "all windows / last half per hour",
    "fitted on",
    "at 72 h (projected)",
    "limit at 72 h",
]
DRIFT_NOTE = (
    "Each series fitted (Theil-Sen: the median of every pair's slope) over every window after warm-up "
    "and over the last half of them. "
    "Where the whole soak grew past the limit and the last half did not, the growth levelled off (a "
    "plateau) and the last half is judged; otherwise the worse of the two. PASS needs the slope's 95 % "
    "interval within the limit, FAIL wholly past it; across it, INVALID (too short or too noisy to tell). "
    "A soak shorter than the profile's minimum span is not judged at all: its slopes are shown. Relative "
    "series (TTFT p99, throughput) grow as a share of their first windows' median per hour; worse is "
    "positive (throughput: a loss). The tier grows as a share of its capacity per hour, and is judged by "
    "that share projected to 72 h. A slope is projected to 72 h only from a soak of at least 1 h."
)
NAMES = {
    "memory-growth": "engine RSS (MiB)",
    "ttft-drift": "TTFT p99 (s)",
    "throughput-retention": "output (tok/s)",
    "tier-growth": "tier (share of capacity)",
}


SHOWN_PER_RECORDED = {"ttft-drift": 1000.0}  # G4 fits TTFT in ms; the report shows every TTFT in s


MIN_PROJECTED_H = 1.0  # a shorter soak's slope says nothing of 72 h: its projection is not shown
UNIT_WORDS = {"x/h": "of the first windows per hour"}  # relative series: a share of their start
KEY_UNIT_WORDS = {"tier-growth": "of its capacity per hour"}  # the tier: a share of its bound


def per_hour(d: DriftFigure, value: float | None, *, unit: bool = True) -> str:
    """A slope as page 1 says it, worse as the table's sign: '+1,420 % of its capacity per hour', 'a loss of
    30 % of the first windows per hour' (throughput: a loss is worse), '+35.2 MiB/h'; ``unit=False``: the
    share alone ('+1,420 %'), for an interval beside a slope that said it."""
    if value is None:
        return "—"
    if d.unit != "x/h":
        return f"{'−' if value < 0 else '+'}{cell(abs(value))} {d.unit}"
    amount = f"{cell(abs(value) * 100)} %"
    if unit:
        amount += f" {KEY_UNIT_WORDS.get(d.key) or UNIT_WORDS[d.unit]}"
    if d.key == "throughput-retention":
        return f"a {'loss' if value >= 0 else 'gain'} of {amount}"
    return f"{'−' if value < 0 else '+'}{amount}"


def past_limit(where: str, d: DriftFigure) -> str | None:
    """A fitted slope past its limit per hour, in words, with its 95 % interval: what a short soak saw
    and did not judge (a long soak fails it only where the whole interval lies past the limit)."""
    if d.growth_per_h is None or d.growth_per_h <= d.limit_per_h:
        return None
    name = NAMES.get(d.key, d.key).split(" (")[0]
    fitted, limit = per_hour(d, d.growth_per_h), per_hour(d, d.limit_per_h)
    said = f"{where}: {name} fitted at {fitted}, past its limit of {limit}"
    if d.key == "tier-growth":  # a reader could not tell where the tiny limit came from
        said += " (the headroom left below its cap, spread over 72 hours)"
    if d.interval_per_h is None:
        return said + " (too few windows for an interval)"
    low = d.growth_per_h - d.interval_per_h
    span = f"{per_hour(d, low, unit=False)} to {per_hour(d, d.growth_per_h + d.interval_per_h, unit=False)}"
    return said + (f" (95 %: {span}, all past it)" if low > d.limit_per_h else f" (95 %: {span}: spans it)")


def drift_cells(where: str, d: DriftFigure) -> list[str]:
    name = NAMES.get(d.key, d.key)
    unit = KEY_UNIT_WORDS.get(d.key) or UNIT_WORDS.get(d.unit, d.unit)
    if d.growth_per_h is None:
        limit = f"{cell(d.limit_per_h)} {unit}"
        return [where, name, f"— (not judged: {d.invalid})", limit, "—", "—", "—", "—"]
    pm = "" if d.interval_per_h is None else f" ± {cell(d.interval_per_h)}"
    judged = f"{cell(d.growth_per_h)}{pm} {unit}" + (f" (not judged: {d.invalid})" if d.invalid else "")
    on = f"{d.judged_on} ({d.tail_windows} of {d.windows})" if d.judged_on == "tail" else f"all {d.windows}"
    on += ", plateau" if d.plateau else ""
    shown = SHOWN_PER_RECORDED.get(d.key, 1.0)
    if d.invalid is None and (d.span_h or 0.0) >= MIN_PROJECTED_H:
        at_72h, limit_72h = cell(d.projected_72h, shown), cell(d.limit_72h, shown)
    else:  # an unjudged slope, or one of a soak too short to speak for 72 h, is not projected
        at_72h, limit_72h = f"— (not projected: a {cell(d.span_h)} h soak)" if not d.invalid else "—", "—"
    return [
        where,
        name,
        judged,
        f"{cell(d.limit_per_h)} {unit}",
        f"{cell(d.whole_per_h)} / {cell(d.tail_per_h)}",
        on,
        at_72h,
        limit_72h,
    ]


def utc(unix_s: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(unix_s))


def integrity_cells(where: str, fig: IntegrityFigures) -> list[str]:
    rate = fig.io_bytes / fig.span_s if fig.span_s else None
    of_device = fig.io_bytes / fig.device_bytes if fig.device_bytes else None
    cpu = 100 * fig.cpu_s / fig.span_s if fig.cpu_s is not None and fig.span_s else None
    failures = str(len(fig.failures)) + (f" ({fig.error})" if fig.error else "")
    return [
        where,
        fig.volume,
        # beside the profile's "at most every N s" (a reader found 5 cycles in 124 s under "every 10 s")
        f"{fig.cycles} in {fig.span_s:.0f} s" if fig.span_s else str(fig.cycles),
        cell(fig.share_bytes_per_s / MB),
        cell(None if rate is None else rate / MB),
        device_share(of_device),
        cell(fig.fio_verified_bytes / MB),
        cell(fig.verified_bytes / MB),
        cell(cpu, digits=2),
        failures,
    ]


def device_share(of_device: float | None) -> str:
    """The integrity load's bytes over the device's; past 100 % it is no share (see INTEGRITY_NOTE), so no
    percentage is printed (a reader found "114 %" printed and then called no measure).

    >>> device_share(0.25), device_share(1.132)
    ('25.0 %', 'none: it moved more bytes than the device counted')
    """
    if of_device is None:
        return "—"
    if of_device > 1:
        return "none: it moved more bytes than the device counted"
    return f"{100 * of_device:.1f} %"


def failure_cells(where: str, f: IntegrityFailure) -> list[str]:
    windows = ", ".join(map(str, f.windows)) or "—"
    offset = "—" if f.offset_bytes is None else str(f.offset_bytes)
    kind = f"{f.kind} ({f.source})"
    return [
        where,
        kind,
        f.volume,
        f.file,
        offset,
        utc(f.first_seen_unix_s),
        windows,
        str(f.times_seen),
        f.detail,
    ]


def integrity_sections(stored: list[tuple[str, G4Row]]) -> list[Section]:
    """The integrity load per deployment, and every place it found wrong."""
    figs = [(k, r.integrity) for k, r in stored]
    if not figs:
        return []
    failures = [failure_cells(k, f) for k, fig in figs for f in fig.failures]
    return [
        table(
            "G4 integrity load", INTEGRITY_COLUMNS, [integrity_cells(k, f) for k, f in figs], INTEGRITY_NOTE
        ),
        table(
            "G4 integrity failures",
            FAILURE_COLUMNS,
            failures or [["—", "none: everything read back equal", "", "", "", "", "", "", ""]],
            "Each place once, with the time the integrity load first found it wrong and the soak windows.",
        ),
    ]


HEALTH_COLUMNS = ["host/engine", "snapshots", "first (UTC)", "last (UTC)", "kernel log", "not on this host"]
KERNEL_COLUMNS = ["host/engine", "time (UTC)", "window", "kind", "kernel line"]
HEALTH_NOTE = (
    "NVMe SMART (G1's nvme smart-log), NVMe-oF paths and ANA states (G1's sysfs probe) and the NICs' pause, "
    "CNP, discard and out-of-buffer counters, at the soak's start, every health.snapshot_s and at its end; "
    "each judged as a delta from the first to the last (warning and temperature: their worst) in the "
    "verdicts above. The kernel log is read for the soak's window only."
)


def health_cells(where: str, h: HealthFigures) -> list[str]:
    log = (
        h.kernel_error
        or f"{h.kernel_source}: {len(h.kernel_lines)} line(s) of a storage, fabric or memory kind"
    )
    window = f"{utc(h.kernel_since_unix_s)} – {utc(h.kernel_until_unix_s)}"
    skipped = absent(h.skipped)
    first = "—" if h.first_unix_s is None else utc(h.first_unix_s)
    last = "—" if h.last_unix_s is None else utc(h.last_unix_s)
    return [where, str(h.snapshots), first, last, f"{log} ({window})", skipped]


def one_reason(why: str) -> str:
    """A missing counter's reason, said once for every counter kind ('no cnp counter …' → 'no such …')."""
    return re.sub(r"^no [\w-]+ counter ", "no such counter ", why)


def absent(skipped: Mapping[str, str]) -> str:
    """The checks a host could not feed, grouped by why (one reason per counter kind ran past the cell).

    >>> absent({"nic-cnp": "no cnp counter on this host (ethtool -S)", "nic-pause": "no pause counter on "
    ...         "this host (ethtool -S)", "paths": "no NVMe-oF controller"})
    'nic-cnp, nic-pause: no such counter on this host (ethtool -S); paths: no NVMe-oF controller'
    """
    by_reason: dict[str, list[str]] = {}
    for check, why in sorted(skipped.items()):
        by_reason.setdefault(one_reason(why), []).append(check)
    said = [
        f"{c[0]}: {skipped[c[0]]}" if len(c) == 1 else f"{', '.join(c)}: {why}"
        for why, c in by_reason.items()
    ]
    return "; ".join(said) or "—"


def kernel_rows(where: str, lines: Sequence[KernelLine]) -> list[list[str]]:
    """One row per form of kernel line: lines that differ only in their numbers (a reconnect loop's
    attempts) are counted on the first one's row, with the last one's time, window and text.

    >>> from kvgate.record.gate_rows import KernelLine as L
    >>> rows = kernel_rows("h/d", [L(time_unix_s=0, kind="NVMe", line="n0: try 1", window=2),
    ...     L(time_unix_s=1, kind="NVMe", line="nvme0: recovered", window=2),
    ...     L(time_unix_s=60, kind="NVMe", line="n0: try 30", window=3)])
    >>> [(r[1][11:], r[2], r[4]) for r in rows]  # doctest: +NORMALIZE_WHITESPACE
    [('00:00:00 – 1970-01-01 00:01:00', '2–3', 'n0: try 1 (2 lines of this form; the last: n0: try 30)'),
     ('00:00:01', '2', 'nvme0: recovered')]
    """
    forms: dict[tuple[str, str], list[KernelLine]] = {}
    for x in lines:
        forms.setdefault((x.kind, re.sub(r"\d+", "#", x.line)), []).append(x)
    rows = []
    for same in forms.values():
        first, last = same[0], same[-1]
        windows = "–".join(dict.fromkeys("—" if x.window is None else str(x.window) for x in (first, last)))
        when, line = utc(first.time_unix_s), first.line
        if len(same) > 1:
            when += f" – {utc(last.time_unix_s)}"
            the_last = "" if last.line == first.line else f"; the last: {last.line}"
            line += f" ({len(same)} lines of this form{the_last})"
        rows.append([where, when, windows, first.kind, line])
    return rows


def health_sections(stored: list[tuple[str, G4Row]]) -> list[Section]:
    """Each deployment's snapshots and kernel log, and every kernel line beside its window."""
    rows = [(k, r.health) for k, r in stored]
    if not rows:
        return []
    lines = [row for k, h in rows for row in kernel_rows(k, h.kernel_lines)]
    return [
        table(
            "G4 device health and kernel log",
            HEALTH_COLUMNS,
            [health_cells(k, h) for k, h in rows],
            HEALTH_NOTE,
        ),
        table(
            "G4 kernel log lines during the soak",
            KERNEL_COLUMNS,
            lines or [["—", "", "", "", "none of a storage, fabric or memory kind"]],
            "Each line with its time and the soak window it fell in (—: between windows); lines that "
            "differ only in their numbers are one row, with how many there were and the last of them.",
        ),
    ]


def evidence_sections(stored: list[tuple[str, G4Row]]) -> list[Section]:
    """Drift, integrity and health sections of every stored host/deployment."""
    drift = [drift_cells(k, d) for k, r in stored for d in r.drift]
    slopes = [table("G4 drift as slopes", DRIFT_COLUMNS, drift, DRIFT_NOTE)] if drift else []
    return [*slopes, *integrity_sections(stored), *health_sections(stored)]
