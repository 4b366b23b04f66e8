"""The scale campaign: G1 over 1, 16 and 64 hosts, with and without the PDF, in interleaved rounds.

Each round runs every (hosts, PDF) configuration once, the order reversed every other round
(ABBA), so a slow stretch of the shared machine falls on every configuration alike. A round is
one pair for the per-host CPU target (64 hosts against 1, same PDF setting). A round in which
the hypervisor took more than 10 % of the CPUs during any of its runs is shown flagged and
left out of the verdicts, as the storage benchmarks do.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interval import PairVerdict, judge_pairs, median_interval
from scale_lab import GateCost
from storage import STEAL_SHARE, cpu_times

SIZES = (1, 16, 64)
CONFIGS = tuple((hosts, pdf) for pdf in (False, True) for hosts in SIZES)
ROUNDS = 6  # the fewest pairs with a 95 % order-statistic interval
EXTRA_ROUNDS_BUDGET_S = 600.0  # an undecided target runs two rounds more at a time, for at most this long
SELECTS_PER_COMMAND = 20.0


@dataclass(frozen=True)
class Observed:
    """One gate run and what the machine did meanwhile (load average at its start, CPU steal over it)."""

    cost: GateCost
    load_1min: float
    cpu_steal: float

    @property
    def disturbed(self) -> str | None:
        return f"CPU steal {self.cpu_steal:.0%}" if self.cpu_steal > STEAL_SHARE else None


def observed(run: Callable[[], GateCost]) -> Observed:
    load = float(Path("/proc/loadavg").read_text().split()[0])
    before = cpu_times()
    cost = run()
    after = cpu_times()
    return Observed(cost, load, (after[1] - before[1]) / max(1, after[2] - before[2]))


@dataclass
class Campaign:
    """Rounds of every configuration; the targets judged over the undisturbed rounds."""

    rounds: list[dict[tuple[int, bool], Observed]] = field(default_factory=list)

    def run(self, gate: Callable[[int, bool], GateCost]) -> None:
        """ROUNDS rounds, then two more at a time while a target is undecided, within the budget."""
        while len(self.rounds) < ROUNDS:
            self._two_rounds(gate)
        deadline = time.monotonic() + EXTRA_ROUNDS_BUDGET_S
        while self.undecided and time.monotonic() < deadline:
            self._two_rounds(gate)

    def _two_rounds(self, gate: Callable[[int, bool], GateCost]) -> None:
        for order in (CONFIGS, CONFIGS[::-1]):
            self.rounds.append({c: observed(lambda c=c: gate(*c)) for c in order})  # type: ignore[misc]

    @property
    def clean(self) -> list[dict[tuple[int, bool], Observed]]:
        return [r for r in self.rounds if not any(o.disturbed for o in r.values())]

    def cpu_per_host_ratios(self, pdf: bool) -> list[float]:
        """kvgate's CPU seconds per host at 64 hosts over those at 1 host, one per round."""
        top = max(SIZES)
        return [(r[top, pdf].cost.kvgate_cpu_s / top) / r[1, pdf].cost.kvgate_cpu_s for r in self.clean]

    def selects_per_command(self) -> list[float]:
        return [o.cost.selects_per_command for r in self.clean for o in r.values()]

    def verdicts(self) -> dict[str, PairVerdict]:
        top = max(SIZES)
        return {
            f"kvgate CPU s per host, {top} hosts / 1 host, {pdf_name(pdf)} ≤ 1": judge_pairs(
                self.cpu_per_host_ratios(pdf), at_most=1.0
            )
            for pdf in (False, True)
        } | {
            f"select() calls per command ≤ {SELECTS_PER_COMMAND:.0f} (every run)": judge_pairs(
                self.selects_per_command(), at_most=SELECTS_PER_COMMAND
            )
        }

    @property
    def undecided(self) -> bool:
        return not self.clean or any(v.verdict == "undecided" for v in self.verdicts().values())

    def wall_ratios(self, hosts: int, pdf: bool) -> list[float]:
        return [r[hosts, pdf].cost.wall_s / r[1, pdf].cost.wall_s for r in self.clean]

    def table(self) -> str:
        """Per configuration: medians of wall time, kvgate's CPU and the lab's; then the verdicts."""
        lines = [
            "G1 scale (real sshd hosts in network namespaces; medians over undisturbed rounds)",
            "  hosts  pdf     wall s   wall / 1 host [95 %]   kvgate CPU s (/host)   lab CPU s   "
            "kvgate share   select/cmd",
        ]
        lines += [self._row(hosts, pdf) for hosts, pdf in CONFIGS]
        flagged = [
            f"round {i}: {o.disturbed}"
            for i, r in enumerate(self.rounds, 1)
            for o in r.values()
            if o.disturbed
        ]
        lines += [f"  flagged, not counted: {f}" for f in flagged]
        lines += [f"  {v.verdict.upper():9}  {name}: {v}" for name, v in self.verdicts().items()]
        return "\n".join(lines)

    def _row(self, hosts: int, pdf: bool) -> str:
        runs = [r[hosts, pdf].cost for r in self.clean]
        wall, cpu = med(c.wall_s for c in runs), med(c.kvgate_cpu_s for c in runs)
        lab, selects = med(c.lab_cpu_s for c in runs), med(c.selects_per_command for c in runs)
        ratios = self.wall_ratios(hosts, pdf)
        bounds = median_interval(ratios)
        shown = f"{med(ratios):5.2f}" + (f" [{bounds[0]:.2f}–{bounds[1]:.2f}]" if bounds else " [—]")
        shown = shown if hosts > 1 else "—"
        share = cpu / (cpu + lab)
        return (
            f"  {hosts:>5}  {pdf_name(pdf):6}  {wall:7.1f}   {shown:20}   {cpu:6.2f} ({cpu / hosts:.3f})"
            f"{'':5}   {lab:9.2f}   {share:11.0%}   {selects:10.1f}"
        )

    def record(self) -> dict[str, Any]:
        """Every run of every round and the verdicts, for ``--benchmark-json``."""
        return {
            "rounds": [
                [
                    {"hosts": h, "pdf": p, **vars(o.cost), "load_1min": o.load_1min, "cpu_steal": o.cpu_steal}
                    for (h, p), o in r.items()
                ]
                for r in self.rounds
            ],
            "verdicts": {
                name: {
                    "verdict": v.verdict,
                    "median": v.median,
                    "interval_95": [v.low, v.high],
                    "pairs": v.pairs,
                    "pairs_needed": v.pairs_needed,
                }
                for name, v in self.verdicts().items()
            },
        }


def med(values: Sequence[float] | Any) -> float:
    return statistics.median(list(values))


def pdf_name(pdf: bool) -> str:
    return "PDF" if pdf else "no PDF"
