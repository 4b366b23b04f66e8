"""The report's charts, drawn at render time from the RunView (matplotlib, reduced by kvgate.report.charts).

- every reference-bound figure against its reference's stated range and the site threshold;
- G2's read bandwidth against I/Os in flight, one line per block size, the knee marked.

Each chart has axis titles and a caption; a run without the data gets no chart, not an empty one.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvgate.reference_schema import Kind
from kvgate.report.charts import figure, to_svg
from kvgate.report.model import RunView
from kvgate.report.summary import is_reference, reference

BAND, MEASURED, THRESHOLD = "#9ecae1", "#08519c", "#c62828"


@dataclass(frozen=True)
class Chart:
    title: str
    svg: str
    caption: str


def charts(view: RunView) -> tuple[Chart, ...]:
    out = [reference_chart(view), *sweep_charts(view), soak_chart(view)]
    return tuple(c for c in out if c is not None)


def reference_chart(view: RunView) -> Chart | None:
    """One row per evaluated reference figure: the seed's range shaded, the threshold, the measurement."""
    rows = [(r, ref) for r in view.all_rows if is_reference(r) and (ref := reference(r.rule)) is not None]
    rows = [(r, ref) for r, ref in rows if isinstance(r.measured_value, int | float)]
    if not rows:
        return None
    with figure(height_in=0.55 * len(rows) + 0.9) as (fig, ax):
        for i, (r, ref) in enumerate(rows):
            low, high = ref.improvement.low, ref.improvement.high
            ax.barh(i, max(high - low, 0.02 * high), left=low, height=0.6, color=BAND)
            threshold = r.expected_value if isinstance(r.expected_value, int | float) else 0.0
            ax.vlines(float(threshold), i - 0.35, i + 0.35, colors=THRESHOLD, linewidth=1.5)
            ax.barh(i, float(r.measured_value), height=0.18, color=MEASURED)  # type: ignore[arg-type]
        ax.set_yticks(
            range(len(rows)), [f"{r.host} {ref.report} ({unit(ref.improvement.kind)})" for r, ref in rows]
        )
        ax.set_xlabel("improvement over the baseline arm (% or ×, as the reference states it)")
        ax.invert_yaxis()
        ax.grid(axis="x", linewidth=0.3)
        svg = to_svg(fig)
    caption = (
        "Shaded: the reference's stated range; red tick: the site threshold; dark bar: what this run "
        "measured. A bar far beyond the shading asks whether the baseline arm was the reference's."
    )
    return Chart("Figures against their references", svg, caption)


def unit(kind: Kind) -> str:
    return {Kind.RATIO: "×", Kind.PERCENT_GAIN: "% gain", Kind.PERCENT_REDUCTION: "% reduction"}[kind]


def sweep_charts(view: RunView) -> list[Chart]:
    out = []
    for key, lines in view.sweeps.items():
        knee = view.knees.get(key)
        with figure() as (fig, ax):
            for bs, points in sorted(lines.items()):
                xs, ys = zip(*sorted(points), strict=True)
                ax.plot(xs, [y / 1e9 for y in ys], linewidth=1.6, label=f"bs {bs}" if bs else key)
            if knee:
                ax.axvline(knee[0], color=THRESHOLD, linewidth=1, linestyle="--", label=f"knee ({knee[1]})")
            ax.set_xscale("log", base=2)
            ticks = sorted({x for points in lines.values() for x, _ in points})
            ax.set_xticks(ticks, [str(x) for x in ticks])
            ax.minorticks_off()
            ax.set_xlabel("I/Os in flight (numjobs × iodepth)")
            ax.set_ylabel("read bandwidth (GB/s)")
            ax.set_ylim(bottom=0)
            ax.grid(linewidth=0.3)
            ax.legend(frameon=False, ncols=min(4, len(lines) + 1))
            svg = to_svg(fig)
        caption = (
            "fio sequential reads, cold, O_DIRECT; the knee is where more I/Os in flight stop adding 5 %."
        )
        out.append(Chart(f"Read bandwidth vs parallelism — {key}", svg, caption))
    return out


def soak_chart(view: RunView) -> Chart | None:
    """G4: TTFT p50/p99 and output throughput per window, one line per deployment, over the soak's hours."""
    windows = view.soak_windows
    if not windows:
        return None
    start = min(w["end_s"] for ws in windows.values() for w in ws)
    with figure(height_in=4.2) as (fig, _ax):
        fig.clear()
        top, bottom = fig.subplots(2, 1, sharex=True)
        for key, ws in windows.items():
            hours = [(w["end_s"] - start) / 3600 for w in ws]
            (line,) = top.plot(hours, [w["ttft_p50_ms"] for w in ws], linewidth=1.4, label=f"{key} p50")
            top.plot(
                hours,
                [w["ttft_p99_ms"] for w in ws],
                linewidth=0.9,
                linestyle="--",
                color=line.get_color(),
                label=f"{key} p99",
            )
            bottom.plot(hours, [w["output_tok_per_s"] for w in ws], linewidth=1.4, color=line.get_color())
        top.set_ylabel("TTFT (ms)")
        bottom.set_ylabel("output (tok/s)")
        bottom.set_xlabel("hours since the first window")
        for axis in (top, bottom):
            axis.set_ylim(bottom=0)
            axis.grid(linewidth=0.3)
        top.legend(frameon=False, fontsize=7, ncols=2)
        svg = to_svg(fig)
    caption = (
        "One point per soak window (the workload's window_s); dashed: TTFT p99. The drift limits judge the "
        "last windows against the first ones after warm-up (G4 verdicts)."
    )
    return Chart("Soak: latency and throughput over time", svg, caption)
