"""The run store keeps partial runs readable and knows what is left to resume."""

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kvgate.base.criteria import Criterion, Measurement, Verdict, judge
from kvgate.base.errors import StoreError
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore, latest_run, outcome


def rec(host: str, check: str, verdict: Verdict) -> JudgementRecord:
    return JudgementRecord(id=f"{host}/{check}", host=host, check=check, verdict=verdict, condition="c")


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
    verdict, missing = outcome(reopened)
    assert (verdict.verdict, missing) == (Verdict.ERROR, ["a/y"])


def test_latest_record_wins_after_resume(tmp_path: Path) -> None:
    store = make(tmp_path, ["b/x"])
    store.record(rec("b", "x", Verdict.ERROR))
    store.record(rec("b", "x", Verdict.PASS))
    assert store.checks()["b/x"].verdict == "PASS"
    verdict, missing = outcome(store)
    assert (verdict.verdict, missing) == (Verdict.PASS, [])


def test_record_from_judgement_carries_criterion_and_evidence(tmp_path: Path) -> None:
    store = make(tmp_path, [])
    j = judge(
        Criterion("G1-CPU-2", "cpu_cores", ">=", 64, source="inventory"),
        Measurement("cpu_cores", 96, evidence=("artifacts/h/cpu",)),
    )
    store.record(JudgementRecord.from_judgement("h", "cpu.cores", j))
    saved = store.checks()["h/cpu.cores"]
    assert saved.condition == "cpu_cores=96 ≥ 64"
    assert saved.evidence == ["artifacts/h/cpu"]


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


def broken(store: RunStore, name: str, text: str | bytes) -> RunStore:
    path = store.path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return store


def edited_meta(store: RunStore, **changes: object) -> RunStore:
    meta = json.loads((store.path / "run.json").read_text())
    meta.update(changes)
    return broken(store, "run.json", json.dumps(meta))


@pytest.mark.parametrize(
    ("edit", "where", "what"),
    [
        (lambda s: broken(s, "run.json", '{"schema": "kvgate.run/1", "gate"'), "run.json", "not valid JSON"),
        (lambda s: broken(s, "run.json", "[1, 2]"), "run.json", "expected a JSON object, got list"),
        (lambda s: broken(s, "run.json", b'{"gate": "\xff"}'), "run.json", "line 1, column 11: not UTF-8"),
        (lambda s: edited_meta(s, planned="a/x"), "run.json", "planned: Input should be a valid list"),
        (lambda s: edited_meta(s, status="PASSED"), "run.json", "status: Input should be 'running'"),
        (
            lambda s: edited_meta(s, inventory={"path": 3}),
            "run.json",
            "inventory.path: Input should be a valid",
        ),
        (lambda s: edited_meta(s, gate=None), "run.json", "gate: Input should be a valid string"),
        (
            lambda s: edited_meta(s, site="[/x]"),
            "run.json",
            "site: String should match pattern",
        ),  # rich markup
        (
            lambda s: broken(
                s, "checks.jsonl", '{"id": "[/x]/x", "host": "[/x]", "check": "x", "verdict": "PASS"}\n'
            ),
            "checks.jsonl",
            "line 1: host: String should match pattern",
        ),
        (lambda s: broken(s, "checks.jsonl", "garbage\n"), "checks.jsonl", "line 1: not valid JSON"),
        (
            lambda s: broken(s, "checks.jsonl", '{"id": "a/x"}\n'),
            "checks.jsonl",
            "line 1: host: required field",
        ),
        (
            lambda s: broken(
                s, "checks.jsonl", '{"id": "a/x", "host": "a", "check": "x", "verdict": "OK"}\n'
            ),
            "checks.jsonl",
            "line 1: verdict: Input should be 'PASS'",
        ),
        (
            lambda s: broken(
                s, "checks.jsonl", '{"id": "b/x", "host": "a", "check": "x", "verdict": "PASS"}\n'
            ),
            "checks.jsonl",
            "id 'b/x' is not '<host>/<check>'",
        ),
        (lambda s: broken(s, "facts/a.json", '{"cpu": '), "facts/a.json", "not valid JSON"),
        (lambda s: broken(s, "facts/a.json", "[]"), "facts/a.json", "expected a JSON object, got list"),
        (
            lambda s: broken(s, "artifacts/index.jsonl", '{"bytes": -1}\n'),
            "artifacts/index.jsonl",
            "line 1: path",
        ),
    ],
)
def test_an_edited_or_truncated_run_file_is_a_store_error_naming_it(
    tmp_path: Path, edit: Callable[[RunStore], RunStore], where: str, what: str
) -> None:
    store = make(tmp_path, ["a/x"])
    store.record(rec("a", "x", Verdict.PASS))
    store.save_facts("a", {"cpu": {}})
    edit(store)
    with pytest.raises(StoreError) as err:
        RunStore.open(store.path).check_files()
    assert str(err.value).startswith(f"{store.path / where}: "), err.value
    assert what in str(err.value), err.value


def test_a_torn_line_in_the_middle_is_named_but_a_torn_last_line_is_a_crash_mid_write(tmp_path: Path) -> None:
    store = make(tmp_path, ["a/x", "a/y"])
    store.record(rec("a", "x", Verdict.PASS))
    with open(store.path / "checks.jsonl", "a") as f:
        f.write('{"id": "a/y", "verd\n')  # then another record after it: not a crash, an edit
    store.record(rec("a", "y", Verdict.PASS))
    with pytest.raises(StoreError, match=r"checks\.jsonl: line 2: not valid JSON"):
        store.checks()


def test_a_run_file_that_is_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    store = make(tmp_path, [])
    (store.path / "checks.jsonl").unlink(missing_ok=True)
    os.mkfifo(store.path / "checks.jsonl")
    with pytest.raises(StoreError, match="expected a regular file, got a FIFO"):
        store.checks()
