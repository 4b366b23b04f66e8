"""G4 fixtures: soak every engine host at once (its deployments one after the other), then judge."""

from __future__ import annotations

import pytest

from kvgate.base.criteria import Inputs
from kvgate.base.errors import LabError, UsageError
from kvgate.orchestration.g4.outcome import SoakResult
from kvgate.orchestration.g4.plan import G4Check, plan
from kvgate.orchestration.g4.report_rows import rows
from kvgate.orchestration.g4.soak import measure_soak
from kvgate.orchestration.gatefixtures import GateRun, deployment_inputs, measure_each_deployment

HostResults = dict[str, SoakResult | LabError]


@pytest.fixture(scope="session")
def g4_measured(gate_run: GateRun) -> dict[str, HostResults | LabError]:
    """Every pending engine host soaked at once; a host's deployments one after the other."""
    config, run_store = gate_run.config, gate_run.store
    started = run_store.run_record().configuration.gate_profile
    if started is not None and started != config.g4:  # a resume judges with the limits its soak started with
        raise UsageError(
            f"{config.files()['g4']} changed since this run started: restore it, or start a new run"
        )
    run_store.merge_meta(configuration={"gate_profile": config.g4.model_dump(mode="json")})
    checks = plan(gate_run.config)
    return measure_each_deployment(
        gate_run, measure_soak, rows, checks=checks, rows_key="g4_rows", done="soaked"
    )


@pytest.fixture
def g4_evidence(check: G4Check, request: pytest.FixtureRequest) -> Inputs:
    """The check's soak measurements and detail; a host or deployment that failed makes it ERROR."""
    return deployment_inputs(check, request, "g4_measured", "G4 soak not run")
