"""G2 fixtures of the NIC-counter check: a snapshot before the first fio job, one after the last.

`g2_measured` requests `nic_counters_before`, so the first snapshot is taken before any
host is measured, whichever G2 test runs first; `nic_deltas` takes the second once
every host (and the cluster aggregate) is done.
"""

from __future__ import annotations

import pytest

from kvgate.base.errors import LabError
from kvgate.orchestration.g2.measure import VolumeResult
from kvgate.orchestration.g2.nic_counters import NicCheck, Snapshot, deltas, nic_plan, patterns_of, snapshot
from kvgate.orchestration.gatefixtures import GateRun

Snapshots = dict[str, Snapshot | LabError]


def _take(when: str, run: GateRun) -> Snapshots:
    checks = nic_plan(run.config)
    hosts = sorted({c.host for c in checks} & run.session.hosts_pending)

    def one(host: str) -> Snapshot:
        snap = snapshot(run.executors[host], patterns_of(checks, host))
        for name, text in snap.raw.items():
            run.store.artifact(host, f"g2/nic-counters/{name}.{when}.txt", text)
        return snap

    return dict(run.fan_out(hosts, one))


@pytest.fixture(scope="session")
def nic_counters_before(gate_run: GateRun) -> Snapshots:
    """Storage NIC counters of every pending storage client, before G2 measures anything."""
    return _take("before", gate_run)


@pytest.fixture(scope="session")
def nic_counters_after(
    gate_run: GateRun, g2_measured: dict[str, dict[str, VolumeResult] | LabError]
) -> Snapshots:
    """The same counters once every host and the cluster aggregate have been measured."""
    del g2_measured  # requested for its order: after the last fio job
    return _take("after", gate_run)


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
