"""G4 fixtures: soak every engine host at once (its deployments one after the other), then judge."""

from __future__ import annotations

import pytest

from kvgate.engines.deployments import Notify, deployment_result, measure_deployments
from kvgate.errors import LabError, UsageError
from kvgate.g4.plan import G4Check, plan
from kvgate.g4.sections import rows
from kvgate.g4.soak import SoakResult, measure_soak
from kvgate.gate_profiles import profile_path
from kvgate.gate_profiles.g4 import load_g4_profile
from kvgate.inventory import LoadedInventory
from kvgate.judge import Inputs
from kvgate.session import GateSession
from kvgate.store import RunStore
from kvgate.transport import Executor

HostResults = dict[str, SoakResult | LabError]


@pytest.fixture(scope="session")
def g4_measured(
    inventory: LoadedInventory, executors: dict[str, Executor], run_store: RunStore, gate_session: GateSession
) -> dict[str, HostResults | LabError]:
    """Every pending engine host soaked at once; a host's deployments one after the other."""
    inv = inventory.inventory
    profile = load_g4_profile(inv.scale)
    now, started = profile.model_dump(mode="json"), run_store.run_record().configuration.gate_profile
    if started is not None and started != now:  # a resume judges with the limits its soak started with
        raise UsageError(
            f"{profile_path('g4', inv.scale)} changed since this run started: restore it, or start a new run"
        )
    run_store.merge_meta(configuration={"gate_profile": now})
    checks = plan(inv)

    def soak(host: str, name: str, notify: Notify) -> SoakResult:
        r = measure_soak(
            executors[host], inv, host=host, name=name, profile=profile, store=run_store, notify=notify
        )
        mine = [c for c in checks if c.host == host and c.subject == name]
        run_store.merge_meta(g4_rows={f"{host}/{name}": rows(r, mine)})
        return r

    return measure_deployments(inv, gate_session, soak, done="soaked")


@pytest.fixture
def g4_evidence(check: G4Check, request: pytest.FixtureRequest) -> Inputs:
    """The check's soak measurements and detail; a host or deployment that failed makes it ERROR."""
    if check.ruled is not None:
        return Inputs()
    r: SoakResult = deployment_result(
        request.getfixturevalue("g4_measured"), check.host, check.subject, "G4 soak not run"
    )
    return Inputs(r.measurements, detail=r.detail(check.key))
