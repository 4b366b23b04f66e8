"""The typed run record: one writer, a versioned schema that reads kvgate.run/1 runs, measurements kept."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel

from kvgate.base.criteria import Criterion, Inputs, Measurement, Verdict
from kvgate.base.errors import StoreError
from kvgate.configuration.fio_matrix import fio_matrix
from kvgate.configuration.gate_profiles import load_g3_profile, load_g4_profile
from kvgate.judgement import Check
from kvgate.record import SCHEMA, SCHEMA_V1, JudgementRecord
from kvgate.record.manifest import verify_manifest
from kvgate.record.schema import LegacyProfile
from kvgate.record.store import RunStore
from kvgate.report.html import render_html
from kvgate.report.model import load_run

V1_RUN = Path(__file__).resolve().parents[1] / "data" / "runs" / "local" / "g1-20261205T035953Z"


def test_a_v1_run_made_before_the_typed_record_still_reads_verifies_and_renders(tmp_path: Path) -> None:
    """A G1 run main made on this machine (kvgate.run/1), read as kvgate.run/2 without touching a file."""
    run = shutil.copytree(V1_RUN, tmp_path / V1_RUN.name)
    assert '"schema": "kvgate.run/1"' in (run / "run.json").read_text()
    view = load_run(run)
    assert view.record.schema_ == SCHEMA
    assert (view.verdict, view.complete) == (Verdict.PASS, True)
    assert view.integrity.status == "verified"  # read in memory: the recorded files are as the run left them
    html = render_html(view, rendered_at="now").replace("<wbr>", "")  # wrap points only
    assert "memory.total" in html
    assert "G1-MEM-1" in html
    assert RunStore.open(run).run_record().gate == "g1"
    assert verify_manifest(run).status == "verified"
    assert SCHEMA_V1 == "kvgate.run/1"


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


def test_an_older_gate_profile_is_kept_as_written_and_a_profile_that_is_no_mapping_is_refused(
    tmp_path: Path,
) -> None:
    older = load_g3_profile("smoke").model_dump(mode="json")
    del older["prompt_tokens"]  # what a G3 profile recorded before prompt_tokens was required lacks
    store = RunStore.create(tmp_path, site="s", gate="g3", meta={})
    store.merge_meta(configuration={"gate_profile": older})
    kept = store.run_record().configuration.gate_profile
    assert isinstance(kept, LegacyProfile)
    assert kept.name == "smoke"  # readable: its name on page 1
    assert kept.model_dump(mode="json") == older  # nothing dropped
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
