"""G4's time series, one chart per soaked deployment, with the slopes G4 judged drawn over them.

Read from the stored windows (``artifacts/<host>/g4/<deployment>/windows.jsonl``), the gate
profile the run recorded (``configuration.gate_profile``: warm-up) and what G4 stored per
host/deployment (``g4_rows``: the tiers' capacity, and each drift figure: the judged fit's line
and the limit's slope from the same start, as kvgate.orchestration.g4.drift judged them). Nothing
is fitted here: the chart draws the gate's numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvgate.base.units import MiB
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.probes.agent import hit_ratio
from kvgate.record import DriftFigure
from kvgate.report.charts import MEASURED, OTHER, THRESHOLD, Chart, figure, to_svg
from kvgate.report.g4_extra_tables import past_limit
from kvgate.report.g4_tables import reuse_slower, soak_windows, spike_said
from kvgate.report.model import RunView
from kvgate.report.numbers import human

Window = dict[str, Any]
Value = Callable[[Window], float | None]


@dataclass(frozen=True)
class Panel:
    """One time series: its axis title, its value per window, the drift series G4 judged on it."""

    title: str
    value: Value
    drift: str | None = None  # the drift figure's key
    p99: Value | None = None  # a second, dashed series (the one the TTFT drift is judged on)
    factor: float = 1.0  # axis unit per the drift figure's unit (the tier: % of capacity)


def _get(*path: str) -> Value:
    def value(w: Window) -> float | None:
        v: Any = w
        for key in path:
            v = v.get(key) if isinstance(v, dict) else None
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    return value


def _hits(w: Window) -> float | None:
    try:
        return hit_ratio(w)
    except (KeyError, TypeError):
        return None


def _mib(value: Value) -> Value:
    return lambda w: None if (v := value(w)) is None else v / MiB


def _s(value: Value) -> Value:
    return lambda w: None if (v := value(w)) is None else v / 1000


PANELS = (  # TTFT in seconds, as everywhere in the report (G4 records and fits it in ms)
    Panel(
        "TTFT (s)",
        _s(_get("summary", "p50_ttft_ms")),
        "ttft-drift",
        _s(_get("summary", "p99_ttft_ms")),
        factor=0.001,
    ),
    Panel("output (tok/s)", _get("summary", "output_throughput_tok_per_s"), "throughput-retention"),
    Panel(
        "engine RSS (MiB)", lambda w: None if (v := _get("rss_kib")(w)) is None else v / 1024, "memory-growth"
    ),
    Panel("tier (MiB)", _mib(_get("cache_dir_bytes"))),  # of its capacity when the record holds it
    Panel("hit ratio", _hits),
)


def recorded_profile(view: RunView) -> G4Profile | None:
    found = view.record.configuration.gate_profile
    # none recorded (a run stopped before G4 loaded it): the series drawn without bounds
    return found if isinstance(found, G4Profile) else None


def soak_charts(view: RunView) -> list[Chart]:
    profile, caps, drift = recorded_profile(view), view.g4_figures(), view.g4_drift()
    judged_keys = {  # host/deployment → the drift checks G4 judged (PASS or FAIL), not only fitted
        key: {v.check.rsplit(".", 1)[-1] for v in row.verdicts if v.verdict in ("PASS", "FAIL")}
        for key, row in view.record.g4_rows.items()
    }
    out = []
    for path in sorted((view.run_dir / "artifacts").glob("*/g4/*/windows.jsonl")):
        key = f"{path.parts[-4]}/{path.parts[-2]}"
        windows = soak_windows(path)
        if windows:
            figs = caps.get(key)
            cap = figs.cap_bytes if figs is not None else None
            fits = {d.key: d for d in drift.get(key, [])}
            out.append(
                soak_chart(
                    key,
                    windows,
                    warmup_windows=warmup(profile),
                    cap=cap,
                    drift=fits,
                    judged=judged_keys.get(key, set()),
                )
            )
    return out


def seen_not_judged(view: RunView) -> tuple[str, ...]:
    """A short soak's trends in words for page 1, the first window after warm-up to the last: shown,
    not judged (a reader found output fall 58 % in 2 minutes only in a chart on page 5); and a cache
    that did not speed reuse up (a reader found it only on page 6)."""
    if not view.outcome.short_soak:
        return ()
    skip, out = warmup(recorded_profile(view)), []
    for path in sorted((view.run_dir / "artifacts").glob("*/g4/*/windows.jsonl")):
        windows = soak_windows(path)
        if slower := reuse_slower(windows):
            said = slower.replace(" (seen, not judged)", "").rstrip(".")  # page 1 says it once for all
            out.append(f"{path.parts[-2]} on {path.parts[-4]}: {said[0].lower()}{said[1:]}")
        kept = windows[skip:] if len(windows) > skip + 1 else windows
        trends = [
            # the TTFT panel draws p99 too: page 1 names the p50 it quotes (a reader took it for the p99)
            f"{panel.title.replace('TTFT', 'TTFT p50')} {human(a)} → {human(b)} "
            f"({'+' if b >= a else '−'}{abs(b - a) / a:.0%})"
            for panel in PANELS[:3]  # TTFT p50, output throughput, engine RSS
            if (a := panel.value(kept[0])) and (b := panel.value(kept[-1])) is not None
        ]
        if len(kept) > 1 and trends:
            first, last = (w.get("index", "?") for w in (kept[0], kept[-1]))  # as the table numbers them
            where = f"{path.parts[-2]} on {path.parts[-4]}, windows {first}–{last}"
            out.append(f"{where}: {', '.join(trends)}")
        out += spike_said(f"{path.parts[-2]} on {path.parts[-4]}", windows)
        row = view.record.g4_rows.get(f"{path.parts[-4]}/{path.parts[-2]}")
        if row is not None and (short := cap_not_reached(windows, row.figures.cap_bytes)):
            out.append(f"{path.parts[-2]} on {path.parts[-4]}: {short}")
    return tuple(out)


def cap_not_reached(windows: list[Window], cap: int | None) -> str:
    """What a tier that never filled leaves unproven (a reader found cache-capacity PASS at 0.738 of a cap
    the tier would have reached two windows after the soak ended).

    >>> cap_not_reached([{"cache_dir_bytes": 3 << 30}, {"cache_dir_bytes": 6 << 30}], 8 << 30)
    'its tier peaked at 75 % of its capacity, so its eviction at the cap was never exercised'
    """
    peaks = [w["cache_dir_bytes"] for w in windows if isinstance(w.get("cache_dir_bytes"), int | float)]
    if not cap or not peaks or max(peaks) >= cap:
        return ""
    share = f"{100 * max(peaks) / cap:.0f} %"
    return f"its tier peaked at {share} of its capacity, so its eviction at the cap was never exercised"


def slopes_past_limits(view: RunView) -> tuple[str, ...]:
    """A short soak's fitted slopes past their limits per hour: held over a soak long enough to judge,
    each would fail it (a reader found the tier growing 14× its cap an hour only on page 6)."""
    if not view.outcome.short_soak:
        return ()
    out = []
    for key, figures in view.g4_drift().items():
        host, _, deployment = key.partition("/")
        out += [said for d in figures if (said := past_limit(f"{deployment} on {host}", d))]
    return tuple(sorted(out, key=lambda said: not said.endswith("all past it)")))  # the firm ones first


def warmup(profile: G4Profile | None) -> int:
    return profile.limits.warmup_windows if profile is not None else 0


def soak_chart(
    key: str,
    windows: list[Window],
    *,
    warmup_windows: int,
    cap: int | None,
    drift: dict[str, DriftFigure],
    judged: set[str],
) -> Chart:
    """Every series of one soak; a drift fit is drawn as judged only where its check was (PASS/FAIL)."""
    first = windows[0].get("start_unix_s")
    start = float(first if isinstance(first, int | float) else windows[0]["end_unix_s"])
    span_s = float(windows[-1]["end_unix_s"]) - start
    unit, per = ("hours", 3600.0) if span_s >= 2 * 3600 else ("minutes", 60.0)
    hours = [(float(w["end_unix_s"]) - start) / per for w in windows]  # in ``unit``
    panels = [p for p in PANELS if any(p.value(w) is not None for w in windows)]
    with figure(height_in=1.35 * len(panels) + 0.6) as (fig, _ax):
        fig.clear()
        axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
        for axis, panel in zip(axes, [of_capacity(p, cap) for p in panels], strict=True):
            draw(axis, panel, *thinned(hours, windows))
            if warmup_windows:
                axis.axvspan(0, hours[min(warmup_windows, len(hours)) - 1], color="#eeeeee", linewidth=0)
            fit = drift.get(panel.drift or "")
            if fit is not None and fit.growth_per_h is not None:
                fitted(axis, panel, fit, 3600.0 / per, judged=fit.key in judged)
        axes[-1].set_xlabel(f"{unit} since the soak started")
        legend_of(fig, axes)
        svg = to_svg(fig)
    tiered = any(w.get("cache_dir_bytes") is not None for w in windows)  # a tier-less engine's has no panel
    text = (
        CAPTION if tiered else CAPTION.removesuffix(TIER_CAPTION) + " This engine has no tier on the storage."
    )
    if len(windows) > MAX_POINTS:
        text += (
            f" {MAX_POINTS} of the {len(windows)} windows are drawn, evenly spaced with the first and last."
        )
    return Chart(f"Soak over time — {key}", svg, text)


LIMITS = {  # what each drift limit limits, named on the chart beside its line
    "ttft-drift": "TTFT p99",
    "throughput-retention": "output",
    "memory-growth": "RSS",
    "tier-growth": "tier",
}
MAX_POINTS = 1000  # per series: a chart's SVG stays well inside the allow-list's 1 MiB
CAPTION = (
    "One point per soak window (TTFT: p50 solid, p99 dashed; TTFT drift is fitted on the p99, so its "
    "slope and limit start from the p99 line). Each slope is fitted by Theil-Sen over every window "
    "after warm-up, or over the last half where the growth levelled off (a plateau): red where G4 judged "
    "it, orange where it was fitted but not judged (its check is SKIP: too short a soak for an hourly "
    "slope); red dashed: the limit's slope from the same start (the G4 profile's per-hour limit), named "
    "at its end. Shaded: warm-up."
)
TIER_CAPTION = " The tier is shown as a share of its capacity (red dotted), its bound."
CAPTION += TIER_CAPTION


def thinned(hours: list[float], windows: list[Window]) -> tuple[list[float], list[Window]]:
    """At most MAX_POINTS windows, evenly spaced, always the first and the last."""
    if len(windows) <= MAX_POINTS:
        return hours, windows
    step = (len(windows) - 1) / (MAX_POINTS - 1)
    keep = [round(i * step) for i in range(MAX_POINTS)]
    return [hours[i] for i in keep], [windows[i] for i in keep]


def of_capacity(panel: Panel, cap: int | None) -> Panel:
    """The tier's size as a share of its capacity (G4's cache-peak and tier-growth checks)."""
    if panel.title != "tier (MiB)" or not cap:
        return panel
    size = panel.value
    share = Panel("tier (% of capacity)", lambda w: None if (v := size(w)) is None else 100 * v * MiB / cap)
    return Panel(share.title, share.value, "tier-growth", factor=100.0)


def legend_of(fig: Any, axes: Any) -> None:
    """One legend below the panels: every series and every limit line says what it is."""
    found: dict[str, Any] = {}
    for axis in axes:
        handles, labels = axis.get_legend_handles_labels()
        found |= {label: h for label, h in zip(labels, handles, strict=True) if label not in found}
    fig.legend(list(found.values()), list(found), loc="outside lower center", ncols=2, frameon=False)


def draw(axis: Any, panel: Panel, hours: list[float], windows: list[Window]) -> None:
    from matplotlib.ticker import FuncFormatter

    points = [(h, v) for h, w in zip(hours, windows, strict=True) if (v := panel.value(w)) is not None]
    series = "TTFT p50" if panel.p99 is not None else None
    axis.plot(*zip(*points, strict=True), linewidth=1.4, color=MEASURED, label=series)
    if panel.p99 is not None:
        tail = [(h, v) for h, w in zip(hours, windows, strict=True) if (v := panel.p99(w)) is not None]
        if tail:
            p99 = "TTFT p99 (its drift is fitted)"
            axis.plot(*zip(*tail, strict=True), linewidth=0.9, linestyle="--", color=OTHER, label=p99)
    axis.set_ylabel(panel.title)
    axis.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))  # 0.1 s, not 0.10
    axis.set_ylim(bottom=0)
    axis.grid(linewidth=0.3)
    if panel.title == "tier (% of capacity)":
        axis.axhline(
            100.0, color=THRESHOLD, linewidth=0.8, linestyle=":", label="the tier's capacity (its bound)"
        )
        axis.set_ylim(top=max(axis.get_ylim()[1], 108.0))


def fitted(axis: Any, panel: Panel, d: DriftFigure, x_per_h: float, *, judged: bool) -> None:
    """The fit from its first window to the last, and the limit's slope from the same start; a fit whose
    check was not judged (a soak too short for an hourly slope) is drawn orange and says so."""
    x0, x1 = (d.fit_from_h or 0.0) * x_per_h, (d.span_h or 0.0) * x_per_h
    y0, y1 = (d.fit_from_value or 0.0) * panel.factor, (d.end_value or 0.0) * panel.factor
    color, label = (THRESHOLD, "slope G4 judged") if judged else (OTHER, "slope (not judged)")
    axis.plot([x0, x1], [y0, y1], color=color, linewidth=1.2, label=label)
    worse = -1.0 if d.key == "throughput-retention" else 1.0
    rise = worse * d.limit_per_h * (d.scale or 1.0) * (x1 - x0) / x_per_h * panel.factor
    limit = f"{LIMITS.get(d.key, d.key)} limit"
    axis.plot([x0, x1], [y0, y0 + rise], color=THRESHOLD, linewidth=1, linestyle="--", label="limit's slope")
    axis.set_ylim(top=max(axis.get_ylim()[1], (y0 + rise) * 1.08, y1 * 1.08))
    low, high = axis.get_ylim()  # the name stays inside the panel, where a loss's line leaves it below 0
    # above a rising line's end, below a falling one's: the line runs left of its end, under or over it
    name = axis.text(
        x1, min(max(y0 + rise, low), high), limit, ha="right", va="bottom" if rise >= 0 else "top"
    )
    name.set_color(THRESHOLD)
    name.set_in_layout(False)
