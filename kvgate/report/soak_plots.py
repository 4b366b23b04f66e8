"""G4's time series, one chart per soaked deployment, with its windows and its drift bounds drawn.

Read from the stored windows (``artifacts/<host>/g4/<deployment>/windows.jsonl``), the gate
profile the run recorded (``configuration.gate_profile``: warm-up, baseline windows, limits)
and the tiers' capacity G4 recorded (``g4_rows.<host/deployment>.figures.cap_bytes``). The
bounds are the ones G4 judges: the median of the last baseline windows against the median of
the first ones after warm-up (kvgate.orchestration.g4.trends), drawn from that first median.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvgate.base.units import MiB
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.orchestration.g4 import Soak, Window, hit_ratio, trend_windows
from kvgate.probes.loadgen import median
from kvgate.report.charts import BAND, MEASURED, OTHER, THRESHOLD, Chart, figure, to_svg
from kvgate.report.g4_tables import soak_windows
from kvgate.report.model import RunView

Value = Callable[[Window], float | None]
LAST = "#fdd0a2"  # the last baseline windows' shading


@dataclass(frozen=True)
class Panel:
    """One time series: its axis title, its value per window, and its bound from the first windows."""

    title: str
    value: Value
    bound: Callable[[float, G4Profile], float] | None = None  # first windows' median → the limit
    p99: Value | None = None  # a second, dashed series


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


PANELS = (
    Panel(
        "TTFT (ms)",
        _get("summary", "p50_ttft_ms"),
        lambda m, p: m * p.limits.max_ttft_p50_ratio,
        _get("summary", "p99_ttft_ms"),
    ),
    Panel(
        "output (tok/s)",
        _get("summary", "output_throughput_tok_per_s"),
        lambda m, p: m * p.limits.min_throughput_retention,
    ),
    Panel(
        "engine RSS (MiB)",
        lambda w: None if (v := _get("rss_kib")(w)) is None else v / 1024,
        lambda m, p: m + p.limits.max_rss_growth_mib,
    ),
    Panel("tier (MiB)", _mib(_get("cache_dir_bytes"))),  # of its capacity when the record holds it
    Panel("hit ratio", _hits, lambda m, p: m * p.limits.min_hit_retention),
)


def recorded_profile(view: RunView) -> G4Profile | None:
    found = view.record.configuration.gate_profile
    # none, or one today's G4Profile does not read (an older kvgate's): the series drawn without bounds
    return found if isinstance(found, G4Profile) else None


def soak_charts(view: RunView) -> list[Chart]:
    profile, caps = recorded_profile(view), view.g4_figures()
    out = []
    for path in sorted((view.run_dir / "artifacts").glob("*/g4/*/windows.jsonl")):
        key = f"{path.parts[-4]}/{path.parts[-2]}"
        windows = soak_windows(path)
        if windows:
            figs = caps.get(key)
            out.append(soak_chart(key, windows, profile, figs.cap_bytes if figs is not None else None))
    return out


def soak_chart(key: str, windows: list[Window], profile: G4Profile | None, cap: int | None) -> Chart:
    first = windows[0].get("start_unix_s")
    start = float(first if isinstance(first, int | float) else windows[0]["end_unix_s"])
    span_s = float(windows[-1]["end_unix_s"]) - start
    unit, per = ("hours", 3600.0) if span_s >= 2 * 3600 else ("minutes", 60.0)
    hours = [(float(w["end_unix_s"]) - start) / per for w in windows]  # in ``unit``
    panels = [p for p in PANELS if any(p.value(w) is not None for w in windows)]
    split = trend_windows(Soak(tuple(windows), 0, 0, cap), profile) if profile else "no gate profile"
    with figure(height_in=1.35 * len(panels) + 0.6) as (fig, _ax):
        fig.clear()
        axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
        for axis, panel in zip(axes, [of_capacity(p, cap) for p in panels], strict=True):
            draw(axis, panel, *thinned(hours, windows))
            if profile is not None and not isinstance(split, str):
                bounds(axis, panel, profile=profile, split=split, hours=hours, windows=windows)
        axes[-1].set_xlabel(f"{unit} since the soak started")
        svg = to_svg(fig)
    text = caption(profile, split)
    if len(windows) > MAX_POINTS:
        text += (
            f" {MAX_POINTS} of the {len(windows)} windows are drawn, evenly spaced with the first and last."
        )
    return Chart(f"Soak over time — {key}", svg, text)


MAX_POINTS = 1000  # per series: a chart's SVG stays well inside the allow-list's 1 MiB


def thinned(hours: list[float], windows: list[Window]) -> tuple[list[float], list[Window]]:
    """At most MAX_POINTS windows, evenly spaced, always the first and the last (the bounds use all)."""
    if len(windows) <= MAX_POINTS:
        return hours, windows
    step = (len(windows) - 1) / (MAX_POINTS - 1)
    keep = [round(i * step) for i in range(MAX_POINTS)]
    return [hours[i] for i in keep], [windows[i] for i in keep]


def of_capacity(panel: Panel, cap: int | None) -> Panel:
    """The tier's size as a share of its capacity, the capacity its bound (G4's cache-peak check)."""
    if panel.title != "tier (MiB)" or not cap:
        return panel
    size = panel.value
    return Panel(
        "tier (% of capacity)",
        lambda w: None if (v := size(w)) is None else 100 * v * MiB / cap,
        lambda _m, _p: 100.0,
    )


def draw(axis: Any, panel: Panel, hours: list[float], windows: list[Window]) -> None:
    points = [(h, v) for h, w in zip(hours, windows, strict=True) if (v := panel.value(w)) is not None]
    axis.plot(*zip(*points, strict=True), linewidth=1.4, color=MEASURED)
    if panel.p99 is not None:
        tail = [(h, v) for h, w in zip(hours, windows, strict=True) if (v := panel.p99(w)) is not None]
        if tail:
            axis.plot(*zip(*tail, strict=True), linewidth=0.9, linestyle="--", color=OTHER)
    axis.set_ylabel(panel.title)
    axis.set_ylim(bottom=0)
    axis.grid(linewidth=0.3)


def bounds(
    axis: Any,
    panel: Panel,
    *,
    profile: G4Profile,
    split: tuple[list[Window], list[Window]],
    hours: list[float],
    windows: list[Window],
) -> None:
    """The warm-up and the two baseline spans shaded; the limit drawn from the first windows' median.

    Window i spans the end of window i-1 (the soak's start for the first) to its own end.
    """
    index = {id(w): i for i, w in enumerate(windows)}
    starts = [0.0, *hours[:-1]]
    if profile.limits.warmup_windows:
        axis.axvspan(
            0, hours[min(profile.limits.warmup_windows, len(hours)) - 1], color="#eeeeee", linewidth=0
        )
    for span, color in zip(split, (BAND, LAST), strict=True):  # adjacent spans stay told apart
        axis.axvspan(
            starts[index[id(span[0])]], hours[index[id(span[-1])]], color=color, alpha=0.35, linewidth=0
        )
    first = [v for w in split[0] if (v := panel.value(w)) is not None]
    if panel.bound is not None and first:
        limit = panel.bound(median(first), profile)
        axis.axhline(limit, color=THRESHOLD, linewidth=1, linestyle="--")
        axis.set_ylim(top=max(axis.get_ylim()[1], limit * 1.08))  # a chart is not clipped: keep it inside


def caption(profile: G4Profile | None, split: tuple[list[Window], list[Window]] | str) -> str:
    text = (
        "One point per soak window (TTFT: p50 solid, p99 dashed). Red dashed: the limit G4 holds the "
        "median of the last windows to, drawn from the median of the first windows after warm-up (TTFT p50 × "
        "max ratio, throughput × min retention, RSS + max growth, hit ratio × min retention), and the tiers' "
        "capacity (the tier as a share of it). Grey: warm-up; shaded blue: the first baseline windows; "
        "shaded orange: the last ones."
    )
    if profile is None or isinstance(split, str):
        text += f" No bounds drawn: {split if isinstance(split, str) else 'no gate profile recorded'}."
    return text
