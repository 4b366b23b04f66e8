"""What G3 keeps in run.json for its report (``g3_rows``): each deployment's numbers, not its table cells.

Rows are kept per host/deployment (and per host/storage[<candidate>]), so a resumed run
adds to the earlier rows. The engines each arm ran on are run.json's ``engines`` (written as
they start). The report lays the tables out when it is rendered (kvgate.report.g3_tables),
so a better formatter changes every stored run's tables; its charts read the same ``figures``.
"""

from __future__ import annotations

from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.orchestration.g3 import serving
from kvgate.orchestration.g3.measure import DeploymentResult
from kvgate.orchestration.g3.plan import G3Check
from kvgate.orchestration.g3.storage import StorageCheck, StorageResult, evaluate_storage
from kvgate.orchestration.verdict_rows import verdict_row
from kvgate.record import arm_order, measurements_to_record


def rows(r: DeploymentResult, checks: list[G3Check]) -> dict[str, Any]:
    """Everything the G3 tables show for one deployment on one host, as numbers."""
    judged = [(c, c.evaluate(r.inputs(c.key))) for c in checks]
    t = r.tier
    return {
        "deployment": {
            "tier": t.name,
            "kind": t.kind,
            "model": r.model,
            "serves_concurrently": t.serves_concurrently,
            "external_tier": t.cache is not None,
            "tier_notes": t.notes,
            "near_ties": r.near_ties,
            "loadgen_address": r.loadgen_address,
            "capacity_figure": r.capacity_figure,
        },
        "verdicts": [verdict_row(c, j) for c, j in judged],
        "serving": serving.as_recorded(r.serving),
        "figures": figures(r, arm_order(list(r.arms))),
    }


def figures(r: DeploymentResult, order: list[str]) -> dict[str, Any]:
    """The raw numbers behind the tables and the report's charts (kvgate.report.g3_plots), arms in order."""
    return {
        "arms": {a: r.arms[a].model_dump() for a in order},
        "predictions": r.predictions,
        "g2": r.g2_figures,
    }


def storage_rows(r: StorageResult, checks: list[StorageCheck]) -> dict[str, Any]:
    """One host's model-load and checkpoint measurements on both volumes, and its R9/R1 verdicts."""
    return {
        "volumes": {
            "candidate": r.candidate,
            "baseline": r.baseline,
            "devices": r.devices,
            "measured": {v: measurements_to_record(ms, evidence=False) for v, ms in r.measured.items()},
        },
        "verdicts": [verdict_row(c, evaluate_storage(c, r)) for c in checks],
        "figures": {"volumes": storage_figures(r)},
    }


STORAGE_FIGURES = {
    "model_load_s": "model_load_s",
    "engine_weights_load_s": "engine.weights_load_s",
    "engine_ready_s": "engine.ready_s",
    "checkpoint_write_s": "checkpoint.write_s",
}


def storage_figures(r: StorageResult) -> dict[str, dict[str, Any]]:
    """Per volume: its role and each time in seconds (None: not measured or not trusted), for the charts."""
    out: dict[str, dict[str, Any]] = {}
    for volume, role in ((r.candidate, "candidate"), (r.baseline, "baseline")):
        ms = r.measured.get(volume, {})
        found = {
            k: r.statistic(volume, k) if k == "model_load_s" else ms.get(m)
            for k, m in STORAGE_FIGURES.items()
        }
        loaded = {"model_load_metric": r.model_load_metric(volume)}
        out[volume] = {"role": role} | {k: _trusted(m) for k, m in found.items()} | loaded
    return out


def _trusted(m: Measurement | None) -> float | None:
    if m is None or m.invalid_reason or isinstance(m.value, bool) or not isinstance(m.value, int | float):
        return None
    return float(m.value)
