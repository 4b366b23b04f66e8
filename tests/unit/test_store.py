"""The run store keeps partial runs readable and knows what is left to resume."""

import json
from pathlib import Path

from kvgate.judge import Criterion, Measurement, Verdict, judge
from kvgate.store import CheckRecord, RunStore, latest_run, outcome


def rec(host: str, check: str, verdict: Verdict) -> CheckRecord:
    return CheckRecord(id=f"{host}/{check}", host=host, check=check, verdict=verdict, condition="c")


def make(tmp_path: Path, planned: list[str]) -> RunStore:
    meta = {"planned": planned, "inventory": {"path": "i.yaml", "sha256": "ab"}}
    return RunStore.create(tmp_path, site="s", gate="g1", meta=meta)


def test_partial_run_is_readable_and_knows_what_is_missing(tmp_path: Path) -> None:
    store = make(tmp_path, ["a/x", "a/y", "b/x"])
    store.record(rec("a", "x", Verdict.PASS))
    store.record(rec("b", "x", Verdict.ERROR))
    with open(store.path / "checks.jsonl", "a") as f:
        f.write('{"id": "a/y", "verd')  # a crash mid-write
    reopened = RunStore.open(store.path)
    assert reopened.meta()["status"] == "running"
    assert reopened.finished_ids() == {"a/x"}
    assert outcome(reopened) == (Verdict.ERROR, ["a/y"])


def test_latest_record_wins_after_resume(tmp_path: Path) -> None:
    store = make(tmp_path, ["b/x"])
    store.record(rec("b", "x", Verdict.ERROR))
    store.record(rec("b", "x", Verdict.PASS))
    assert store.checks()["b/x"]["verdict"] == "PASS"
    assert outcome(store) == (Verdict.PASS, [])


def test_record_from_judgement_carries_criterion_and_evidence(tmp_path: Path) -> None:
    store = make(tmp_path, [])
    j = judge(
        Criterion("G1-CPU-2", "cpu_cores", ">=", 64, source="inventory"),
        Measurement("cpu_cores", 96, evidence=("artifacts/h/cpu",)),
    )
    store.record(CheckRecord.from_judgement("h", "cpu.cores", j))
    saved = store.checks()["h/cpu.cores"]
    assert saved["condition"] == "cpu_cores=96 ≥ 64"
    assert saved["evidence"] == ["artifacts/h/cpu"]


def test_artifacts_are_indexed_with_hashes(tmp_path: Path) -> None:
    store = make(tmp_path, [])
    rel = store.artifact("h", "cpu/lscpu.json", "{}", command="lscpu -J")
    index = [json.loads(x) for x in (store.path / "artifacts" / "index.jsonl").read_text().splitlines()]
    assert (store.path / rel).read_text() == "{}"
    assert index[0]["sha256"] == "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"


def test_latest_run_filters_by_inventory(tmp_path: Path) -> None:
    store = make(tmp_path, [])
    assert latest_run(tmp_path, "s", "g1", inventory_sha256="ab") is not None
    assert latest_run(tmp_path, "s", "g1", inventory_sha256="other") is None
    assert latest_run(tmp_path, "s", "g2") is None
    store.finish("complete")
    assert RunStore.open(store.path).meta()["ended_at"]
