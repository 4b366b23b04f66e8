"""G3's charts, from the raw numbers G3 records beside its tables (``g3_rows.<host/deployment>.figures``).

- the TTFT distribution (p50, p90, p99) of every arm at every load level;
- each arm's output throughput against its reference's band (the seed's range applied to the
  baseline arm the reference compares with, as the gate profile binds them);
- R1's picture: restore bandwidth and TTFT of the serial vs the parallel tier reader, G2's read
  ceiling of the volume beside them;
- the tiering planner's predicted TTFTs beside the measured ones.

A run recorded before G3 kept these numbers gets no chart, not an empty one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kvgate.configuration.gate_profiles import VOLUME_ARMS, WHOLE_VOLUME_ARMS, VerdictBinding
from kvgate.configuration.reference_schema import Kind, Reference
from kvgate.record import ArmFigures, G2Figures, PredictionRow, StorageFigures, VolumeFigures
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
    spread_bar,
    to_svg,
    unjudged_bar,
)
from kvgate.report.g3_figures import bindings, deployments, level, number, suffixes
from kvgate.report.model import RunView

CACHED = ("ssd-restore", "warm", "ssd-tier", "parallel-read", *VOLUME_ARMS, *WHOLE_VOLUME_ARMS)  # from a tier
READERS = ("serial-read", "parallel-read")


def label(arm: str) -> str:
    return f"{arm.partition('@')[0]} · {level(arm)}"


ARM_ORDER = (
    "recompute",
    "ssd-restore",
    "warm",
    "dram-only",
    "ssd-tier",
    *VOLUME_ARMS,
    *WHOLE_VOLUME_ARMS,
    *READERS,
)


def in_order(arms: dict[str, ArmFigures]) -> list[tuple[str, ArmFigures]]:
    """Arms by level (one prompt, conc 4, 8, 16, the whole machine), then as the protocol runs them."""

    def rank(arm: str) -> tuple[float, int, str]:
        name, _, at = arm.partition("@")
        where = 0.0 if not at else float("inf") if at == "whole" else float(at.removeprefix("c") or 0)
        return (where, ARM_ORDER.index(name) if name in ARM_ORDER else len(ARM_ORDER), name)

    return sorted(arms.items(), key=lambda item: rank(item[0]))


def plain_log(axis: Any) -> None:
    """A log axis labelled 0.1, 1, 10 (not 10⁰ in mathtext), without minor labels."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def g3_charts(view: RunView) -> list[Chart | None]:
    out: list[Chart | None] = []
    skipped = {(r.host, r.check) for r in view.all_rows if r.label == "SKIP"}
    for key, figs in deployments(view):
        host, _, deployment = key.partition("/")
        judged = [b for b in bindings(view) if (host, f"engine[{deployment}].{b.check}") not in skipped]
        out += [
            ttft_chart(key, figs.arms),
            throughput_chart(key, figs.arms, Bound(bindings(view), judged), view.reference),
            readers_chart(key, figs.arms, figs.g2),
            prediction_chart(key, figs.predictions),
        ]
    stored = view.g3_figures().items()
    out += [storage_chart(key, f.volumes) for key, f in stored if isinstance(f, StorageFigures) and f.volumes]
    return out


def ttft_chart(key: str, arms: dict[str, ArmFigures]) -> Chart | None:
    """Per arm and level: a thick tick at p50, a thin one at p90, the line running on to p99."""
    rows = [(a, s) for a, s in in_order(arms) if number(s.ttft_p50_s)]
    if not rows:
        return None
    with figure(height_in=0.24 * len(rows) + 1.0) as (fig, ax):
        for i, (arm, s) in enumerate(rows):
            p50, p90, p99 = number(s.ttft_p50_s), number(s.ttft_p90_s), number(s.ttft_p99_s)
            color = MEASURED if arm.partition("@")[0] in CACHED else OTHER
            if p50 is not None and p99 is not None:
                ax.hlines(i, p50, p99, colors=color, linewidth=1)
            ax.vlines(p50, i - 0.32, i + 0.32, colors=color, linewidth=3)
            if p90 is not None:
                ax.vlines(p90, i - 0.2, i + 0.2, colors=color, linewidth=1.2)
            if p50 is not None and (sd := repeats_sd(s, p50)):
                spread_bar(ax, i + 0.4, p50, sd)
        ax.set_xscale("log")
        plain_log(ax.xaxis)
        names = [label(a) + (" (shared)" if s.qualifications else "") for a, s in rows]
        label_rows(ax, names, xlabel="time to first token (s, log scale)")
        svg = to_svg(fig)
    caption = (
        "Thick tick: TTFT p50; thin tick: p90; the line ends at p99. “(shared)”: in some of its loads "
        "another reader shared the device (the restore evidence table says how many and whose bytes), so "
        "its timings carry that reader's work. Blue: arms that read a cache tier "
        "(SSD on either volume, warm, parallel read); orange: the others (recompute, the DRAM tier, the "
        "serial read). One prompt: percentiles over the trials; a load level: "
        "medians over trials of each load's percentiles. Black error bar under the p50: ±1 standard "
        "deviation over the trials (repeats), where there were two or more."
    )
    return Chart(f"TTFT distribution per arm and load — {key}", svg, caption)


def band(ref: Reference, baseline: float) -> tuple[float, float]:
    """The seed's range applied to the baseline arm: where the candidate arm should land."""
    low, high = ref.improvement.low, ref.improvement.high
    if ref.improvement.kind is Kind.RATIO:
        return baseline * low, baseline * high
    return baseline * (1 + low / 100), baseline * (1 + high / 100)


@dataclass(frozen=True)
class Pair:
    """One row of the throughput chart: a binding's level, its two arms' throughput, whether judged."""

    level: str
    ref: Reference
    arm: str  # the candidate arm
    base: float
    cand: float
    judged: bool


@dataclass(frozen=True)
class Bound:
    """The profile's bindings and those of them this deployment's verdicts judged (not SKIP)."""

    all: Sequence[VerdictBinding]
    judged: Sequence[VerdictBinding]


def throughput_pairs(
    arms: dict[str, ArmFigures],
    binds: Bound,
    reference: Callable[[str], Reference | None],
) -> list[Pair]:
    out = []
    for b in binds.all:
        ref = reference(b.reference)
        if b.statistic != "output_throughput_tok_per_s" or ref is None:
            continue
        for suffix in suffixes(b):
            base = throughput(arms.get(f"{b.baseline_arm}{suffix}"))
            cand = throughput(arms.get(f"{b.candidate_arm}{suffix}"))
            if base is not None and cand is not None:
                arm = f"{b.candidate_arm}{suffix}"
                out.append(Pair(f"{ref.report} {level(arm)}", ref, arm, base, cand, b in binds.judged))
    return out


def throughput(arm: ArmFigures | None) -> float | None:
    return number(arm.output_throughput_tok_per_s) if arm is not None else None


def throughput_chart(
    key: str,
    arms: dict[str, ArmFigures],
    binds: Bound,
    reference: Callable[[str], Reference | None],
) -> Chart | None:
    pairs = throughput_pairs(arms, binds, reference)
    if not pairs:
        return None
    with figure(height_in=0.5 * len(pairs) + 1.1) as (fig, ax):
        for i, p in enumerate(pairs):
            if p.judged:  # an unjudged figure is not set against the seed's range, not even in a picture
                lo, hi = band(p.ref, p.base)
                width = max(hi - lo, 0.015 * max(hi, p.cand))  # a one-value range (+29 %) still shows
                ax.barh(i, width, left=lo, height=0.9, color=BAND, label="the seed's range")
            ax.barh(i - 0.17, p.base, height=0.3, color=OTHER, label="baseline arm")
            if p.judged:
                ax.barh(i + 0.17, p.cand, height=0.3, color=MEASURED, label="candidate arm")
            else:
                unjudged_bar(ax, i + 0.17, p.cand, height=0.3, label=f"candidate arm, {NOT_JUDGED}")
        rows = [f"{p.level}\n{p.arm.partition('@')[0]} vs baseline" for p in pairs]
        rows = [r if p.judged else f"{r}\n{NOT_JUDGED}" for r, p in zip(rows, pairs, strict=True)]
        label_rows(ax, rows, xlabel="output throughput (tokens/s)")
        legend_below(ax)
        svg = to_svg(fig)
    caption = (
        "Orange: the baseline arm the reference compares with; blue: the candidate arm where a verdict "
        f"judged it, a dashed outline marked “{NOT_JUDGED}” where none did (an engine that serves one "
        "request at a time, or a figure not comparable with the seed's); shaded, behind a judged pair "
        "only: the seed's range applied to the baseline (where the candidate lands if it gains what the "
        "seed reports). Medians over trials (or rounds) of each load's output tokens/s."
    )
    return Chart(f"Throughput against the reference bands — {key}", svg, caption)


def repeats_sd(arm: ArmFigures, center: float) -> float | None:
    """One standard deviation of an arm's TTFT over its trials (its CV × the p50); None for one trial."""
    cv = number(arm.ttft_cv)
    return cv * center if cv and arm.trials > 1 else None


def restored(arm: ArmFigures) -> bool:
    return bool(number(arm.read_bw_gb_per_s) or number(arm.ttft_p50_s))


def readers_chart(key: str, arms: dict[str, ArmFigures], g2: G2Figures | None) -> Chart | None:
    """R1: the serial and the parallel reader at each level, bandwidth and TTFT side by side."""
    levels = sorted({a.partition("@")[2] for a in arms if a.partition("@")[0] in READERS})
    found = [(f"{r} · {level('x@' + c)}", arms.get(f"{r}@{c}")) for c in levels for r in READERS]
    rows = [(name, s) for name, s in found if s is not None and restored(s)]
    if not rows:
        return None
    ceiling = number(g2.read_ceiling_bytes_per_s) if g2 is not None else None
    with figure(height_in=0.3 * len(rows) + 1.3) as (fig, _ax):
        fig.clear()
        bw_ax, ttft_ax = fig.subplots(1, 2, sharey=True)
        for i, (name, s) in enumerate(rows):
            color = MEASURED if name.startswith("parallel") else OTHER
            bw_ax.barh(i, number(s.read_bw_gb_per_s) or 0.0, height=0.6, color=color)
            ttft_ax.barh(i, number(s.ttft_p50_s) or 0.0, height=0.6, color=color)
            if (p50 := number(s.ttft_p50_s)) is not None and (sd := repeats_sd(s, p50)):
                spread_bar(ttft_ax, i, p50, sd)
        if ceiling is not None:
            bw_ax.axvline(
                ceiling / 1e9, color=THRESHOLD, linewidth=1, linestyle="--", label="G2's read ceiling"
            )
            legend_below(bw_ax)
            bw_ax.set_xlim(0, max(bw_ax.get_xlim()[1], ceiling / 1e9 * 1.08))  # a chart is not clipped
        label_rows(bw_ax, [name for name, _ in rows], xlabel="restore read bandwidth (GB/s)")
        ttft_ax.set_xlabel("TTFT p50 (s)")
        ttft_ax.grid(axis="x", linewidth=0.3)
        svg = to_svg(fig)
    caption = (
        "R1's picture: the same prompts restored cold by the serial and by the parallel tier reader "
        "(the seed: bandwidth 5.3×, TTFT 4.1×). Bandwidth: the engine's own read bytes over the time to "
        "the load's last first token; red dashed: G2's read ceiling of the volume (the most G2 saw it "
        "deliver). Error bars: ±1 standard deviation of TTFT over the trials."
    )
    return Chart(f"Cold restore: serial vs parallel reader (R1) — {key}", svg, caption)


def prediction_chart(key: str, predictions: list[PredictionRow]) -> Chart | None:
    """Per load: the planner's restore and recompute TTFT beside the measured p50."""
    rows = []
    for p in predictions:
        load = "one prompt" if p.concurrency == 1 else f"conc {p.concurrency}"
        for what, pair in (("restore", p.restore_ttft_s), ("recompute", p.recompute_ttft_s)):
            # one prompt's recompute is the rate's source: no prediction to draw beside it
            predicted = None if what == "recompute" and p.concurrency == 1 else number(pair[0])
            if predicted is not None or number(pair[1]) is not None:
                rows.append((f"{what} · {load}", predicted, number(pair[1])))
    if not rows:
        return None
    with figure(height_in=0.42 * len(rows) + 1.1) as (fig, ax):
        for i, (_, predicted, measured) in enumerate(rows):  # points, not bars: the axis is logarithmic
            if predicted is not None and predicted > 0:
                ax.vlines(predicted, i - 0.34, i - 0.02, colors=BAND, linewidth=4, label="predicted")
            if measured is not None and measured > 0:
                ax.vlines(measured, i + 0.02, i + 0.34, colors=MEASURED, linewidth=4, label="measured")
        ax.set_xscale("log")
        ax.margins(x=0.1)  # no mark on the axis' edge
        plain_log(ax.xaxis)
        label_rows(ax, [name for name, _, _ in rows], xlabel="TTFT p50 (s, log scale)")
        legend_below(ax)
        svg = to_svg(fig)
    caption = (
        "The tiering planner (kvgate plan) from G2's figures of the volume and this run's recompute arm, "
        "beside what the arms measured, each a mark on a log axis (light, above: predicted; dark, below: "
        "measured). A missing mark: not predicted (no figure) or not measured (no such arm)."
    )
    return Chart(f"Planner: predicted vs measured TTFT — {key}", svg, caption)


STORAGE_TIMES: dict[str, Callable[[VolumeFigures], float | None]] = {
    "model load (agent, fastest loader)": lambda v: v.model_load_s,
    "engine weight load": lambda v: v.engine_weights_load_s,
    "engine launch to ready": lambda v: v.engine_ready_s,
    "checkpoint write": lambda v: v.checkpoint_write_s,
}


def storage_chart(key: str, volumes: dict[str, VolumeFigures]) -> Chart | None:
    """R9 and R1's checkpoint: each time on the candidate volume beside the baseline volume."""
    by_role = {v.role: (name, v) for name, v in volumes.items()}
    on = {role: by_role[role][1] for role in ("baseline", "candidate") if role in by_role}
    rows = [
        (what, *(number(time(on[role])) if role in on else None for role in ("baseline", "candidate")))
        for what, time in STORAGE_TIMES.items()
    ]
    rows = [r for r in rows if r[1] is not None or r[2] is not None]
    if not rows:
        return None
    names = {role: by_role[role][0] for role in ("baseline", "candidate") if role in by_role}
    with figure(height_in=0.45 * len(rows) + 1.1) as (fig, ax):
        for i, (_, base, cand) in enumerate(rows):
            if base is not None:
                ax.barh(
                    i - 0.17, base, height=0.3, color=OTHER, label=f"baseline {names.get('baseline', '')}"
                )
            if cand is not None:
                ax.barh(
                    i + 0.17,
                    cand,
                    height=0.3,
                    color=MEASURED,
                    label=f"candidate {names.get('candidate', '')}",
                )
        label_rows(ax, [str(what) for what, _, _ in rows], xlabel="time (s)")
        legend_below(ax)
        svg = to_svg(fig)
    caption = (
        "Model loading (R9: launch to a ready endpoint, the weight load within it, the agent's loaders) and "
        "the checkpoint save (R1), cold, on the candidate and on the baseline volume; shorter is better. "
        "A missing bar: not measured or not trusted (the tables say why)."
    )
    return Chart(f"Model load and checkpoint: candidate vs baseline — {key}", svg, caption)
