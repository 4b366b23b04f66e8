"""Fixtures gates share: executors per host and the G1 facts collected concurrently."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kvgate.errors import LabError
from kvgate.facts import HostContext, HostFacts, collect_host
from kvgate.g1 import manifest, tools_wanted
from kvgate.inventory import LoadedInventory
from kvgate.session import GateSession
from kvgate.store import RunStore
from kvgate.transport import Executor, connect
from kvgate.transport.fanout import fan_out


@pytest.fixture(scope="session")
def executors(inventory: LoadedInventory) -> Iterator[dict[str, Executor]]:
    """One lazily-connecting executor per host; all closed at the end of the session."""
    exs = {name: connect(name, host) for name, host in inventory.inventory.hosts.items()}
    yield exs
    for ex in exs.values():
        ex.close()


@pytest.fixture(scope="session")
def g1_facts(
    inventory: LoadedInventory,
    executors: dict[str, Executor],
    run_store: RunStore,
    gate_session: GateSession,
) -> dict[str, HostFacts | LabError]:
    """Facts of every host with checks to run, collected concurrently and stored as they arrive."""
    inv = inventory.inventory

    def collect(name: str) -> HostFacts:
        host = inv.hosts[name]
        ctx = HostContext(name, inv.volumes_of(name), host.sudo, tools_wanted(inv, name))
        facts = collect_host(executors[name], ctx, on_family=lambda fam: gate_session.notify(name, fam))
        save_facts(run_store, name, facts)
        return facts

    hosts = sorted(gate_session.hosts_pending) or sorted(inv.hosts)
    results = fan_out({h: h for h in hosts}, collect)
    for host, result in results.items():
        gate_session.notify(host, "facts collected" if isinstance(result, HostFacts) else f"ERROR: {result}")
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
