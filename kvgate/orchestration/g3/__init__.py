from __future__ import annotations

from kvgate.orchestration.g3.measure import probe_deployment
from kvgate.orchestration.g3.plan import plan
from kvgate.orchestration.g3.report_rows import arm_order
from kvgate.orchestration.g3.serving import KEYS
from kvgate.orchestration.g3.storage import StorageResult, evaluate_storage, storage_plan

__all__ = [
    "KEYS",
    "StorageResult",
    "arm_order",
    "evaluate_storage",
    "plan",
    "probe_deployment",
    "storage_plan",
]
