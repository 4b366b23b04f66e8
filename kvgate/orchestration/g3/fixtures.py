"""G3 fixtures: measure every engine host concurrently, then hand each check its deployment's numbers."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from kvgate.base.criteria import Inputs
from kvgate.base.errors import LabError
from kvgate.configuration.references import check_consistency
from kvgate.orchestration.g3.measure import DeploymentResult, measure_deployment
from kvgate.orchestration.g3.plan import G3Check, plan
from kvgate.orchestration.g3.report_rows import rows, storage_rows
from kvgate.orchestration.g3.storage import StorageCheck, StorageResult, measure_storage, storage_plan
from kvgate.orchestration.gatefixtures import GateRun, deployment_inputs, measure_each_deployment
from kvgate.probes.nfs_server import ServerCache

HostResults = dict[str, DeploymentResult | LabError]
StorageResults = dict[str, StorageResult]  # by candidate volume


def record_configuration(gate_run: GateRun) -> None:
    """The G3 profile and every reference it binds, as loaded: the report reads them from the run,
    so a later edit of gates/references.yaml cannot change what an old report says."""
    config = gate_run.config
    bound = {i: config.references.get(i).model_dump(mode="json") for i in config.g3.reference_ids()}
    gate_run.store.merge_meta(
        configuration={"gate_profile": config.g3.model_dump(mode="json"), "bound_references": bound}
    )


@pytest.fixture(scope="session")
def g3_measured(gate_run: GateRun) -> dict[str, HostResults | LabError]:
    """Every pending engine host measured at once; its deployments one after the other."""
    config, store = gate_run.config, gate_run.store
    store.update_meta(reference_notes=[str(d) for d in check_consistency(config.references)])
    record_configuration(gate_run)
    return measure_each_deployment(
        gate_run,
        measure_deployment,
        rows,
        checks=plan(gate_run.config),
        rows_key="g3_rows",
        done="measured",
    )


@pytest.fixture
def g3_evidence(check: G3Check, request: pytest.FixtureRequest) -> Inputs:
    """The check's deployment measurements and detail; a host that failed makes its checks ERROR."""
    return deployment_inputs(check, request, "g3_measured", "G3 measurements not taken")


@pytest.fixture(scope="session")
def g3_storage(gate_run: GateRun) -> dict[str, StorageResults | LabError]:
    """Model-load and checkpoint on every pending host's candidate and baseline volumes, hosts at once."""
    inv, exs, store = gate_run.inventory, gate_run.executors, gate_run.store
    checks = [c for c in storage_plan(gate_run.config) if c.ruled is None]
    record_configuration(gate_run)  # also when only the storage checks run

    def measure_host(host: str) -> StorageResults:
        out: StorageResults = {}
        notify = partial(gate_run.session.notify, host)
        for candidate in dict.fromkeys(c.spec.candidate for c in checks if c.host == host):
            mine = [c for c in checks if c.host == host and c.spec.candidate == candidate]
            servers = {v: ServerCache.of(inv, v, exs) for v in inv.volumes}
            r = measure_storage(exs[host], gate_run.config, mine, store=store, notify=notify, servers=servers)
            store.merge_meta(g3_rows={f"{host}/storage[{candidate}]": storage_rows(r, mine)})
            out[candidate] = r
        return out

    hosts = sorted({c.host for c in checks} & gate_run.session.hosts_pending)
    return gate_run.fan_out(hosts, measure_host)


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
