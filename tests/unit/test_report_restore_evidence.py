"""Page 1's evidence checklist sets a G3 restore's bandwidth beside what G2 measured on the same volume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_report_g3_charts import FACTS, g3_configuration

from kvgate.base.criteria import Verdict
from kvgate.record import ArmFigures, JudgementRecord
from kvgate.record.store import RunStore
from kvgate.report.model import load_run
from kvgate.report.summary import summarize


def arm(name: str, tput: float, bw: float | None) -> dict[str, Any]:
    """An arm's summary as G3 records it (ArmFigures): throughput and restore bandwidth measured."""
    figures = ("ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "ttft_cv", "e2e_p50_s", "prompt_tokens_p50")
    figures += ("device_read_bytes_p50", "engine_read_bytes_p50", "hit_tokens_p50", "cache_growth_bytes_p50")
    unmeasured = dict.fromkeys((*figures, "predicted_bytes_p50", "restart_to_ready_p50_s"), None)
    summary = ArmFigures(
        arm=name, trials=1, completed=1, output_throughput_tok_per_s=tput, read_bw_gb_per_s=bw, **unmeasured
    )
    return summary.model_dump()


ARMS = {  # R2/R3: the tier on the baseline volume and on the candidate
    "baseline-volume@c8": arm("baseline-volume@c8", 6.67, 0.3),
    "candidate-volume@c8": arm("candidate-volume@c8", 10.0, 0.52),
}
# G2's figures of the volume as G3 records them (StorageBound.recorded()): measured, or promised
MEASURED = {
    "measured": True,
    "read_ceiling_bytes_per_s": 1.36e9,
    "kv_restore_request_bytes_per_s": 4.1e8,
    "best_read_bytes_per_s": 1.41e9,
    "source": "G2 lab-a/g2-20261205T010000Z",
}
ASSUMED = {
    "measured": False,
    "read_ceiling_bytes_per_s": 2e9,
    "kv_restore_request_bytes_per_s": None,
    "best_read_bytes_per_s": None,
    "source": "the inventory's expect: promise",
}


def run(root: Path, g2: dict[str, Any]) -> Path:
    figures = {"arms": ARMS, "predictions": [], "g2": g2}
    meta = {
        "planned": [],
        "g3_rows": {"h/tiny": {"deployment": FACTS, "verdicts": [], "serving": [], "figures": figures}},
        "configuration": g3_configuration(),
    }
    store = RunStore.create(root, site="lab-a", gate="g3", meta=meta)
    check = "engine[tiny].throughput-gain-conc8"
    store.record(
        JudgementRecord(
            id=f"h/{check}",
            host="h",
            check=check,
            verdict=Verdict.PASS,
            condition="throughput_gain_pct=49.9 ≥ 28.5",
            rule="R2R3-cold-restore-throughput-conc8",
            metric="throughput_gain_pct",
            measured=49.9,
            expected=28.5,
            comparator=">=",
            unit="%",
        )
    )
    store.finish("complete")
    return store.path


def test_the_restore_stands_beside_g2s_read_ceiling_and_kv_restore_of_the_volume(tmp_path: Path) -> None:
    (head,) = summarize(load_run(run(tmp_path, MEASURED))).headline
    assert (
        "restore 520 MB/s by the engine's bytes (candidate-volume · conc 8) vs G2 on this volume"
        in head.evidence
    )
    assert "read ceiling 1.36 GB/s, one KV restore 410 MB/s" in head.evidence


def test_without_a_measured_g2_the_checklist_says_so_instead_of_a_number(tmp_path: Path) -> None:
    (head,) = summarize(load_run(run(tmp_path, ASSUMED))).headline
    assert "G2: no usable G2 run measured this volume" in head.evidence
    assert "2 GB/s" not in head.evidence  # the inventory's promise is not shown as a G2 measurement
