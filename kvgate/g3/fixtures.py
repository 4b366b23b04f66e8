"""G3 fixtures: measure every engine host concurrently, then hand each check its deployment's numbers."""

from __future__ import annotations

from typing import Any

import pytest

from kvgate.engines.deployments import Notify, deployment_result, measure_deployments
from kvgate.errors import LabError
from kvgate.g3.measure import DeploymentResult, measure_deployment
from kvgate.g3.plan import G3Check, plan
from kvgate.g3.sections import rows, storage_rows
from kvgate.g3.storage import StorageCheck, StorageResult, measure_storage, storage_plan
from kvgate.gate_profiles.g3 import load_g3_profile
from kvgate.inventory import LoadedInventory
from kvgate.judge import Inputs
from kvgate.nfs_server import ServerCache
from kvgate.references import check_consistency, load_references
from kvgate.session import GateSession
from kvgate.store import RunStore
from kvgate.transport import Executor
from kvgate.transport.fanout import fan_out

HostResults = dict[str, DeploymentResult | LabError]
StorageResults = dict[str, StorageResult]  # by candidate volume


@pytest.fixture(scope="session")
def g3_measured(
    inventory: LoadedInventory, executors: dict[str, Executor], run_store: RunStore, gate_session: GateSession
) -> dict[str, HostResults | LabError]:
    """Every pending engine host measured at once; its deployments one after the other."""
    inv = inventory.inventory
    profile = load_g3_profile(inv.scale)
    notes = [str(d) for d in check_consistency(load_references())]
    run_store.update_meta(reference_notes=notes)
    run_store.merge_meta(configuration={"gate_profile": profile.model_dump(mode="json")})
    checks = plan(inv)

    def measure(host: str, name: str, notify: Notify) -> DeploymentResult:
        r = measure_deployment(
            executors[host], inv, host=host, name=name, profile=profile, store=run_store, notify=notify
        )
        mine = [c for c in checks if c.host == host and c.subject == name]
        run_store.merge_meta(g3_rows={f"{host}/{name}": rows(r, mine)})
        return r

    return measure_deployments(inv, gate_session, measure, done="measured")


@pytest.fixture
def g3_evidence(check: G3Check, request: pytest.FixtureRequest) -> Inputs:
    """The check's deployment measurements and detail; a host that failed makes its checks ERROR."""
    if check.ruled is not None:
        return Inputs()
    r: DeploymentResult = deployment_result(
        request.getfixturevalue("g3_measured"), check.host, check.subject, "G3 measurements not taken"
    )
    return Inputs(r.measurements, detail=r.detail(check.key))


@pytest.fixture(scope="session")
def g3_storage(
    inventory: LoadedInventory, executors: dict[str, Executor], run_store: RunStore, gate_session: GateSession
) -> dict[str, StorageResults | LabError]:
    """Model-load and checkpoint on every pending host's candidate and baseline volumes, hosts at once."""
    inv = inventory.inventory
    profile = load_g3_profile(inv.scale)
    checks = [c for c in storage_plan(inv) if c.ruled is None]

    def measure_host(host: str) -> StorageResults:
        out: StorageResults = {}
        for candidate in dict.fromkeys(c.spec.candidate for c in checks if c.host == host):
            notify = lambda e: gate_session.notify(host, e)  # noqa: E731 - a one-line callback
            mine = [c for c in checks if c.host == host and c.spec.candidate == candidate]
            servers = {v: ServerCache.of(inv, v, executors) for v in inv.volumes}
            r = measure_storage(
                executors[host], inv, mine, profile=profile, store=run_store, notify=notify, servers=servers
            )
            run_store.merge_meta(g3_rows={f"{host}/storage[{candidate}]": storage_rows(r, mine)})
            out[candidate] = r
        return out

    hosts = sorted({c.host for c in checks} & gate_session.hosts_pending)
    return fan_out({h: h for h in hosts}, measure_host)


@pytest.fixture
def g3_storage_result(check: StorageCheck, request: pytest.FixtureRequest) -> StorageResult | None:
    """The check's host and candidate volume measured; None when there is no baseline to compare."""
    if check.ruled is not None:
        return None
    measured: dict[str, Any] = request.getfixturevalue("g3_storage")
    result = measured[check.host]
    if isinstance(result, LabError):
        raise LabError(f"{check.host}: G3 model-load/checkpoint not measured: {result}") from result
    found: StorageResult = result[check.spec.candidate]
    return found
