"""Fixtures gates share: executors per host, the `GateRun` every measuring fixture works with,
the engine deployments measured one by one (G3, G4), and the G1 facts collected concurrently."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import pytest

from kvgate.base.criteria import Inputs, Measurement
from kvgate.base.errors import LabError
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import Inventory, LoadedInventory
from kvgate.orchestration.deployments import Notify, deployment_result, measure_deployments
from kvgate.orchestration.g1 import manifest, tools_wanted
from kvgate.orchestration.session import GateSession
from kvgate.probes.facts import HostContext, HostFacts, collect_host
from kvgate.record import RunStore
from kvgate.transport import Executor, connect, fan_out


class Measured(Protocol):
    """One deployment's result as G3 and G4 keep it: its measurements, and what each check is judged on."""

    measurements: dict[str, Measurement]

    def inputs(self, key: str) -> Inputs: ...


R = TypeVar("R", bound=Measured)
T = TypeVar("T")


@pytest.fixture(scope="session")
def executors(inventory: LoadedInventory) -> Iterator[dict[str, Executor]]:
    """One lazily-connecting executor per host; all closed at the end of the session."""
    exs = {name: connect(name, host) for name, host in inventory.inventory.hosts.items()}
    yield exs
    for ex in exs.values():
        ex.close()


@dataclass(frozen=True)
class GateRun:
    """What a gate's measuring fixtures work with: the configuration the run recorded (the inventory
    and every file it selects, read once), a connection per host, the store, the session."""

    config: GateConfig
    executors: dict[str, Executor]
    store: RunStore
    session: GateSession

    @property
    def inventory(self) -> Inventory:
        return self.config.inventory.inventory

    def fan_out(self, hosts: Iterable[str], fn: Callable[[str], T]) -> dict[str, T | LabError]:
        """``fn(host)`` on every host at once, within the inventory's ``max_parallel_hosts``."""
        return fan_out({h: h for h in hosts}, fn, max_workers=self.inventory.max_parallel_hosts)


@pytest.fixture(scope="session")
def gate_run(executors: dict[str, Executor], run_store: RunStore, gate_session: GateSession) -> GateRun:
    return GateRun(gate_session.gate_config(), executors, run_store, gate_session)


def measure_each_deployment(
    run: GateRun,
    measure: Callable[..., R],
    rows: Callable[[R, list[Any]], Any],
    *,
    checks: Sequence[Any],
    rows_key: str,
    done: str,
) -> dict[str, dict[str, R | LabError] | LabError]:
    """Every pending engine host's deployments measured (`measure_deployments`); each deployment's
    report rows (``rows(result, its checks)``) go into run.json under ``rows_key`` once it is done.

    ``measure(ex, config, *, host, name, store, notify)`` measures one deployment.
    """

    def one(host: str, name: str, notify: Notify) -> R:
        r = measure(run.executors[host], run.config, host=host, name=name, store=run.store, notify=notify)
        mine = [c for c in checks if c.host == host and c.subject == name]
        run.store.merge_meta(**{rows_key: {f"{host}/{name}": rows(r, mine)}})
        return r

    return measure_deployments(run.inventory, run.session, one, done=done)


def deployment_inputs(check: Any, request: pytest.FixtureRequest, measured: str, what: str) -> Inputs:
    """The check's deployment measurements and detail, from the fixture named ``measured`` (only
    requested when the plan left the check to measure); a host that failed makes the check ERROR."""
    if check.ruled is not None:
        return Inputs()
    r: Measured = deployment_result(request.getfixturevalue(measured), check.host, check.subject, what)
    return r.inputs(check.key)


@pytest.fixture(scope="session")
def g1_facts(gate_run: GateRun) -> dict[str, HostFacts | LabError]:
    """Facts of every host with checks to run, collected concurrently and stored as they arrive."""
    inv = gate_run.inventory

    def collect(name: str) -> HostFacts:
        host = inv.hosts[name]
        ctx = HostContext(name, inv.volumes_of(name), host.sudo, tools_wanted(inv, name))
        facts = collect_host(
            gate_run.executors[name], ctx, on_family=lambda fam: gate_run.session.notify(name, fam)
        )
        save_facts(gate_run.store, name, facts)
        return facts

    hosts = sorted(gate_run.session.hosts_pending) or sorted(inv.hosts)
    results = gate_run.fan_out(hosts, collect)
    for host, result in results.items():
        gate_run.session.notify(
            host, "facts collected" if isinstance(result, HostFacts) else f"ERROR: {result}"
        )
    return results


def save_facts(store: RunStore, host: str, facts: HostFacts) -> None:
    """Raw outputs as artifacts, facts as JSON, the host's manifest into run.json."""
    for name, text in facts.artifacts().items():
        store.artifact(host, name, text)
    store.save_facts(host, facts.to_json())
    tools = facts.family("tools").facts.get("tools", {})
    versions = {n: t.get("version") for n, t in tools.items()}
    store.merge_meta(manifest={host: manifest(facts)}, tool_versions={host: versions})


@pytest.fixture
def facts(check: Any, g1_facts: dict[str, HostFacts | LabError]) -> HostFacts:
    """The facts of the check's host; a host that could not be reached makes the check ERROR."""
    result = g1_facts[check.host]
    if isinstance(result, LabError):
        raise LabError(f"{check.host}: facts not collected: {result}") from result
    return result
