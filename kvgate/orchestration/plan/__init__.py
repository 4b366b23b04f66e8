"""The tiering planner (``kvgate plan``): from G2's figures and the model's shape, what G3 should measure.

model.py        the arithmetic: restore and recompute TTFT, capacity gain, storage floor, tier size
inputs.py       where each number comes from: a usable G2 run, a G3 run, the inventory, a declaration
deployments.py  every deployment of an inventory planned for G3's workloads
render.py       a plan as table cells and lines of text
cli.py          the command: options checked, plans printed
"""

from __future__ import annotations

from kvgate.orchestration.plan.cli import options, show
from kvgate.orchestration.plan.deployments import Options, plan_deployment
from kvgate.orchestration.plan.inputs import (
    Sourced,
    TierFigures,
    assumed_storage,
    g2_storage,
    latest_passed,
    serving_from_arm,
    state_bytes_per_token,
)
from kvgate.orchestration.plan.model import Prediction

__all__ = [
    "Options",
    "Prediction",
    "Sourced",
    "TierFigures",
    "assumed_storage",
    "g2_storage",
    "latest_passed",
    "options",
    "plan_deployment",
    "serving_from_arm",
    "show",
    "state_bytes_per_token",
]
