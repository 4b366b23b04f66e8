"""The report's charts, drawn at render time from the RunView (matplotlib, reduced by kvgate.report.charts).

- every reference-bound figure against its reference's stated range and the site threshold;
- G2's read bandwidth against I/Os in flight, one line per block size, the knee marked;
- G2's KV restore by one reader vs several per request (R1's picture on the storage), its ceiling beside;
- G3's arms, readers, planner and model loads (kvgate.report.g3_plots);
- G4's time series with its windows and drift bounds (kvgate.report.soak_plots).

Each chart has axis titles and a caption; a run without the data gets no chart, not an empty one.
"""

from __future__ import annotations

from kvgate.configuration.reference_schema import Kind
from kvgate.report.charts import (
    BAND,
    MEASURED,
    NOT_JUDGED,
    OTHER,
    THRESHOLD,
    Chart,
    figure,
    label_rows,
    legend_below,
    to_svg,
    unjudged_bar,
)
from kvgate.report.g3_plots import g3_charts
from kvgate.report.model import RunView
from kvgate.report.provenance import deployment_of
from kvgate.report.soak_plots import soak_charts
from kvgate.report.summary import is_reference


def charts(view: RunView) -> tuple[Chart, ...]:
    out = [reference_chart(view), *sweep_charts(view), *restore_charts(view), *g3_charts(view)]
    out += soak_charts(view)
    return tuple(c for c in out if c is not None)


def reference_chart(view: RunView) -> Chart | None:
    """One row per evaluated reference figure: the seed's range shaded, the threshold, the measurement."""
    rows = [
        (r, ref) for r in view.all_rows if is_reference(r) and (ref := view.reference(r.rule)) is not None
    ]
    rows = [(r, ref) for r, ref in rows if isinstance(r.measured_value, int | float)]
    if not rows:
        return None
    with figure(height_in=0.55 * len(rows) + 1.2) as (fig, ax):
        for i, (r, ref) in enumerate(rows):
            low, high = ref.improvement.low, ref.improvement.high
            ax.barh(
                i, max(high - low, 0.02 * high), left=low, height=0.6, color=BAND, label="the seed's range"
            )
            threshold = r.expected_value if isinstance(r.expected_value, int | float) else 0.0
            ax.vlines(float(threshold), i - 0.35, i + 0.35, colors=THRESHOLD, linewidth=1.5, label=FLOOR)
            if r.label == "SKIP":
                unjudged_bar(ax, i, float(r.measured_value), height=0.18, label=f"measured, {NOT_JUDGED}")  # type: ignore[arg-type]
            else:
                ax.barh(i, float(r.measured_value), height=0.18, color=MEASURED, label="measured")  # type: ignore[arg-type]
        label_rows(
            ax,
            [
                f"{r.host}/{deployment_of(r.check)} {ref.report} ({unit(ref.improvement.kind)})"
                for r, ref in rows
            ],
            xlabel="improvement over the baseline arm (% or ×, as the reference states it)",
        )
        for i, (r, _) in enumerate(rows):
            if (
                r.label == "SKIP"
            ):  # the mark on the chart itself, with the figure, not only in the verdict table
                said = f" {NOT_JUDGED}: {r.measured}"
                ax.text(float(r.measured_value), i - 0.2, said, va="bottom", fontsize=8)  # type: ignore[arg-type]
        legend_below(ax)
        svg = to_svg(fig)
    caption = (
        "Shaded: the reference's stated range; red tick: the site threshold, the floor the verdict "
        "judges the measured improvement against; dark bar: what this run measured (a dashed outline "
        f"marked “{NOT_JUDGED}” with its figure: shown, not judged, claiming nothing). A reference measured "
        "at several levels is drawn at the one its check judged, the least improvement (every level must "
        "reach the floor); the verdict table names each level's figure. A bar far beyond the shading asks "
        "whether the baseline arm was the reference's."
    )
    return Chart("Figures against their references", svg, caption)


FLOOR = "site threshold (the floor of the improvement)"


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


READERS = {
    "kv_restore.serial.read_bw_bytes_per_s": "KV restore, 1 reader per request",
    "kv_restore.parallel.read_bw_bytes_per_s": "KV restore, parallel readers",
}
CEILING = "ceiling.read_bw_bytes_per_s"


def restore_charts(view: RunView) -> list[Chart]:
    """G2: per volume, the KV restore's bandwidth with one reader and with several, G2's ceiling beside."""
    trusted: dict[str, dict[str, float]] = {}
    for r in view.all_rows:
        value = r.measured_value
        if (
            r.label in ("PASS", "FAIL", "WAIVED")
            and isinstance(value, int | float)
            and not isinstance(value, bool)
        ):
            trusted.setdefault(f"{r.host}/{r.check.split('.')[0]}", {})[r.metric] = float(value)
    for key, row in view.record.g2_rows.items():  # the ceiling is a figure of the record, not a check's
        host, _, volume = key.rpartition("/")
        ceiling = row.measurements.get(CEILING)
        if ceiling is not None and not ceiling.invalid_reason and isinstance(ceiling.value, int | float):
            trusted.get(f"{host}/volume[{volume}]", {})[CEILING] = float(ceiling.value)
    return [
        restore_chart(where, found)
        for where, found in sorted(trusted.items())
        if READERS.keys() <= found.keys()
    ]


def restore_chart(where: str, found: dict[str, float]) -> Chart:
    with figure(height_in=1.6) as (fig, ax):
        for i, metric in enumerate(READERS):
            ax.barh(i, found[metric] / 1e9, height=0.6, color=OTHER if i == 0 else MEASURED)
        if CEILING in found:
            ax.axvline(
                found[CEILING] / 1e9, color=THRESHOLD, linewidth=1, linestyle="--", label="read ceiling"
            )
            legend_below(ax, ncols=1)
        ax.set_xlim(0, max(found.get(k, 0.0) for k in (*READERS, CEILING)) / 1e9 * 1.08)  # nothing clipped
        label_rows(ax, list(READERS.values()), xlabel="read bandwidth (GB/s)")
        svg = to_svg(fig)
    caption = (
        "The agent's KV-cache cold restore on this volume (the G3 tier's storage path without an engine): "
        "every request at once, each read by one reader and by several (R1's serial vs parallel read). "
        "Red dashed: the volume's read ceiling (its best fio cell's re-runs' mean, or a faster G2 read)."
    )
    return Chart(f"KV restore: one reader vs parallel readers — {where}", svg, caption)
