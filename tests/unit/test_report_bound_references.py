"""The report says of a reference what the run bound at plan time, not what gates/references.yaml says now."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvgate.base.criteria import Criterion, Measurement, judge
from kvgate.configuration.gate_profiles import load_g3_profile
from kvgate.configuration.references import load_references
from kvgate.record import JudgementRecord, RunStore
from kvgate.report.model import load_run
from kvgate.report.summary import headline

RULE = "R2-recompute-ttft-p50-conc16"


def g3_run(root: Path, configuration: dict[str, Any]) -> Path:
    store = RunStore.create(
        root, site="lab-a", gate="g3", meta={"planned": [], "configuration": configuration}
    )
    criterion = Criterion(RULE, "ttft_p50_reduction_pct", ">=", 50.0, unit="%", source="reference")
    found = judge(criterion, Measurement("ttft_p50_reduction_pct", 80.0, "%"))
    store.record(JudgementRecord.from_judgement("h", f"tiny.{RULE}", found))
    store.finish("complete")
    return store.path


def recorded(**changes: str) -> dict[str, Any]:
    """The shipped reference of RULE as a G3 run records it, with the scenario edited."""
    ref = load_references().get(RULE).model_dump(mode="json")
    ref["scenario"] |= changes
    return ref


def test_the_headline_reads_the_reference_the_run_recorded(tmp_path: Path) -> None:
    bound = {RULE: recorded(en="as bound when this run was planned")}
    view = load_run(g3_run(tmp_path, {"bound_references": bound}))
    (line,) = headline(view)
    assert "(as bound when this run was planned)" in line.note  # not the shipped scenario
    assert view.reference("R9-load-time-deepseek-32b") is None  # not bound by this run: no reference


def test_a_run_that_bound_no_reference_is_judged_against_none(tmp_path: Path) -> None:
    """Before, a G3 run without bound references read today's gates/references.yaml instead."""
    view = load_run(g3_run(tmp_path, {}))
    assert view.reference(RULE) is None
    assert not headline(view)  # nothing said of a reference the run did not record


def test_the_g3_profile_names_every_reference_it_binds() -> None:
    profile = load_g3_profile("smoke")
    bound = {v.reference for v in profile.verdicts} | {s.reference for s in profile.storage.verdicts}
    assert set(profile.reference_ids()) == bound
    assert len(profile.reference_ids()) == len(bound)  # once each
