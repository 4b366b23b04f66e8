"""The typed run record: one writer, today's schema only (an earlier one is refused), measurements kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from kvgate.base.criteria import Criterion, Inputs, Measurement
from kvgate.base.errors import StoreError
from kvgate.cli.command_line import main
from kvgate.configuration.fio_matrix import fio_matrix
from kvgate.configuration.gate_profiles import load_g3_profile, load_g4_profile
from kvgate.judgement import Check
from kvgate.record import JudgementRecord
from kvgate.record.schema import SCHEMA
from kvgate.record.store import RunStore


def running_run(tmp_path: Path, **edit: Any) -> Path:
    """A G3 run cut before its end (no manifest: report reads it), its run.json then edited."""
    profile = load_g3_profile("smoke").model_dump(mode="json")
    store = RunStore.create(tmp_path, site="s", gate="g3", meta={"configuration": {"gate_profile": profile}})
    meta = json.loads((store.path / "run.json").read_text())
    (store.path / "run.json").write_text(json.dumps(meta | edit))
    return store.path


def test_a_run_of_an_earlier_schema_is_refused_naming_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, a kvgate.run/1 run.json was migrated in memory and read as today's: no release holds one."""
    run = running_run(tmp_path, schema="kvgate.run/1")
    assert main(["report", str(run), "--no-pdf"]) == 4
    assert f"{run / 'run.json'}: schema: 'kvgate.run/1', expected '{SCHEMA}'" in capsys.readouterr().err
    with pytest.raises(StoreError, match=r"run\.json: schema: 'kvgate\.run/1'"):
        RunStore.open(run)


def test_a_gate_profile_today_does_not_read_is_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, an edited (or older) gate profile in run.json was kept as written, silently (LegacyProfile)."""
    older = load_g3_profile("smoke").model_dump(mode="json")
    del older["prompt_tokens"]
    run = running_run(tmp_path, configuration={"gate_profile": older})
    assert main(["report", str(run), "--no-pdf"]) == 4
    err = capsys.readouterr().err
    assert f"{run / 'run.json'}: configuration.gate_profile.G3Profile.prompt_tokens: required" in err
    unknown = {"configuration": {"gate_profile": {"name": "smoke"}}}  # no kind, verdicts or limits
    with pytest.raises(StoreError, match=r"configuration\.gate_profile: expected G2's fio matrix"):
        RunStore.create(tmp_path / "b", site="s", gate="g3", meta=unknown)


def test_run_json_has_one_typed_writer_that_refuses_a_key_the_record_does_not_declare(tmp_path: Path) -> None:
    """Before, any module could write any key into run.json (a dict[str, Any])."""
    store = RunStore.create(tmp_path, site="s", gate="g2", meta={})
    with pytest.raises(StoreError, match="g2_rowz"):
        store.update_meta(g2_rowz={"h/v": {}})
    store.merge_meta(configuration={"gate_profile": fio_matrix("smoke").model_dump(mode="json")})
    assert store.run_record().configuration.gate_profile == fio_matrix("smoke")


@pytest.mark.parametrize(
    ("gate", "profile"),
    [
        ("g2", lambda: fio_matrix("smoke")),
        ("g3", lambda: load_g3_profile("smoke")),
        ("g4", lambda: load_g4_profile("smoke")),
    ],
)
def test_a_gate_profile_is_read_back_as_the_model_it_was_loaded_with(
    tmp_path: Path, gate: str, profile: Callable[[], BaseModel]
) -> None:
    """Before, configuration.gate_profile was a dict[str, Any] every reader picked keys out of."""
    store = RunStore.create(tmp_path, site="s", gate=gate, meta={})
    store.merge_meta(configuration={"gate_profile": profile().model_dump(mode="json")})
    assert store.run_record().configuration.gate_profile == profile()


def test_a_profile_that_is_no_mapping_is_refused(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, site="s", gate="g3", meta={})
    with pytest.raises(StoreError, match="gate_profile"):
        store.merge_meta(configuration={"gate_profile": "smoke"})


def test_a_judgement_is_stored_with_the_measurements_it_was_judged_on(tmp_path: Path) -> None:
    store = RunStore.create(tmp_path, site="s", gate="g2", meta={})
    check = Check(
        host="h", check="bw", criterion=Criterion("G2-FIO-1", "bw", ">=", 2.0, "GB/s"), spec=None, key="bw"
    )
    m = Measurement("bw", 2.5, "GB/s", ("artifacts/h/fio.json",))
    j = check.evaluate(Inputs({"bw": m, "other": Measurement("other", 1)}, detail="not shown on PASS"))
    store.record(JudgementRecord.from_judgement("h", "bw", j))
    stored = store.checks()["h/bw"]
    assert stored.inputs is not None
    assert stored.inputs.measured["bw"].model_dump() == {
        "metric": "bw",
        "value": 2.5,
        "unit": "GB/s",
        "evidence": ["artifacts/h/fio.json"],
        "invalid_reason": None,
    }
    assert check.evaluate(stored.inputs.inputs()) == j  # judged again, the same
