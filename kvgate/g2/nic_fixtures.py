"""G2 fixtures of the NIC-counter check: a snapshot before the first fio job, one after the last.

`g2_measured` requests `nic_counters_before`, so the first snapshot is taken before any
host is measured, whichever G2 test runs first; `nic_deltas` takes the second once
every host (and the cluster aggregate) is done.
"""

from __future__ import annotations

import pytest

from kvgate.errors import LabError
from kvgate.g2.measure import VolumeResult
from kvgate.g2.nic_counters import NicCheck, Snapshot, deltas, nic_plan, patterns_of, snapshot
from kvgate.inventory import LoadedInventory
from kvgate.session import GateSession
from kvgate.store import RunStore
from kvgate.transport import Executor
from kvgate.transport.fanout import fan_out

Snapshots = dict[str, Snapshot | LabError]


def _take(
    when: str, inventory: LoadedInventory, executors: dict[str, Executor], store: RunStore, pending: set[str]
) -> Snapshots:
    checks = nic_plan(inventory.inventory)
    hosts = sorted({c.host for c in checks} & pending)

    def one(host: str) -> Snapshot:
        snap = snapshot(executors[host], patterns_of(checks, host))
        for name, text in snap.raw.items():
            store.artifact(host, f"g2/nic-counters/{name}.{when}.txt", text)
        return snap

    return dict(fan_out({h: h for h in hosts}, one))


@pytest.fixture(scope="session")
def nic_counters_before(
    inventory: LoadedInventory, executors: dict[str, Executor], run_store: RunStore, gate_session: GateSession
) -> Snapshots:
    """Storage NIC counters of every pending storage client, before G2 measures anything."""
    return _take("before", inventory, executors, run_store, gate_session.hosts_pending)


@pytest.fixture(scope="session")
def nic_counters_after(
    inventory: LoadedInventory,
    executors: dict[str, Executor],
    run_store: RunStore,
    gate_session: GateSession,
    g2_measured: dict[str, dict[str, VolumeResult] | LabError],
) -> Snapshots:
    """The same counters once every host and the cluster aggregate have been measured."""
    del g2_measured  # requested for its order: after the last fio job
    return _take("after", inventory, executors, run_store, gate_session.hosts_pending)


@pytest.fixture
def nic_deltas(
    check: NicCheck, nic_counters_before: Snapshots, nic_counters_after: Snapshots
) -> dict[str, dict[str, int]]:
    """What moved on the check's host; a host whose counters could not be read makes it ERROR."""
    return deltas(_read(check.host, nic_counters_before), _read(check.host, nic_counters_after))


def _read(host: str, snaps: Snapshots) -> Snapshot:
    snap = snaps.get(host)
    if isinstance(snap, LabError):
        raise LabError(f"{host}: NIC counters not read: {snap}") from snap
    if snap is None:
        raise LabError(f"{host}: NIC counters were not read (host not pending?)")
    return snap
