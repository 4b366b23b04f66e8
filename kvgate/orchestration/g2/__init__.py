from __future__ import annotations

from kvgate.orchestration.g2.nic_counters import evaluate_nic, nic_plan
from kvgate.orchestration.g2.plan import plan

__all__ = ["evaluate_nic", "nic_plan", "plan"]
