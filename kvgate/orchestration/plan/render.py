"""A deployment plan as text: one row per workload, then every input with its source and the assumptions.

Cells are plain strings (the CLI prints them as a table, tests read them as they are).

>>> cells(None, "s"), cells(1.2345, "s"), cells(0.256, "%"), cells(8.61, "x")
('—', '1.23 s', '+26%', '8.6×')
"""

from __future__ import annotations

from kvgate.orchestration.plan.deployments import DeploymentPlan
from kvgate.orchestration.plan.inputs import Sourced
from kvgate.orchestration.plan.model import Prediction

COLUMNS = ("conc", "prompt", "restore", "recompute", "speedup", "TTFT", "capacity", "floor", "SSD tier")
CAPTION = (
    "restore / recompute: TTFT p50 predicted; speedup = recompute / restore; TTFT: restore vs recompute; "
    "capacity: output throughput of the SSD tier over DRAM only; floor: no restore of the load can be faster"
)


def cells(value: float | None, unit: str) -> str:
    """One table cell: seconds to 3 digits, a share as a signed percentage, a ratio with ×, bytes in GB."""
    if value is None:
        return "—"
    if unit == "%":
        return f"{value:+.0%}"
    if unit == "x":
        return f"{value:.1f}×"
    if unit == "GB":
        return f"{value / 1e9:.3g} GB"
    return f"{value:.3g} {unit}"


def row(p: Prediction) -> list[str]:
    """One workload's predictions as table cells."""
    w = p.workload
    reduction = None if p.ttft_reduction is None else -p.ttft_reduction
    return [
        str(w.concurrency),
        str(w.prompt_tokens),
        cells(p.restore_ttft_s, "s"),
        cells(p.recompute_ttft_s, "s"),
        cells(p.speedup, "x"),
        cells(reduction, "%"),
        cells(p.capacity_gain, "%"),
        cells(p.storage_floor_s, "s"),
        cells(p.tier_bytes, "GB"),
    ]


def title(plan: DeploymentPlan) -> str:
    return (
        f"engine {plan.deployment} on {plan.host}: {plan.tier_profile}, tier on volume {plan.volume}, "
        f"{_figure(plan.kv_bytes_per_token, 'B/token')}"
    )


def _figure(f: Sourced, unit: str, scale: float = 1.0) -> str:
    if f.value is None:
        return "unknown"
    value = f.value / scale
    return f"{value:.0f} {unit}" if value >= 1000 else f"{value:.4g} {unit}"


def inputs(plan: DeploymentPlan) -> list[str]:
    """Every input of the plan with where it came from, then the assumptions."""
    s = plan.storage
    lines = [
        f"read ceiling: {_figure(s.ceiling, 'GB/s', 1e9)} — {s.ceiling.source}",
        f"per-request restore: {_figure(s.per_request, 'GB/s', 1e9)} — {s.per_request.source}",
        f"prefill: {_figure(plan.prefill, 'tokens/s')} — {plan.prefill.source}",
        f"decode per request: {_figure(plan.decode, 's')} — {plan.decode.source}",
        f"state per token: {_figure(plan.kv_bytes_per_token, 'B')} — {plan.kv_bytes_per_token.source}",
    ]
    return lines + [f"assumed: {a}" for a in plan.assumptions]


def why_empty(plan: DeploymentPlan) -> str | None:
    """Why a plan has no predictions (no storage figure, no state size), or None."""
    if plan.predictions:
        return None
    missing = [f.source for f in (plan.storage.ceiling, plan.kv_bytes_per_token) if f.value is None]
    return "nothing predicted: " + "; ".join(missing)
