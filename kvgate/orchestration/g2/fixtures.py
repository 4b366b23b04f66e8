"""G2 fixtures: measure every host's scratch volumes concurrently, then hand checks their numbers."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from kvgate.base.criteria import Inputs, Measurement
from kvgate.base.errors import LabError
from kvgate.configuration.fio_matrix import MatrixProfile
from kvgate.configuration.inventory import CLUSTER
from kvgate.orchestration.g2.cluster import Member, measure_cluster
from kvgate.orchestration.g2.measure import VolumeResult, measure_volume
from kvgate.orchestration.g2.plan import G2Check, shared_volumes
from kvgate.orchestration.g2.report_rows import row
from kvgate.orchestration.g2.workloads import VolumeUnderTest
from kvgate.orchestration.gatefixtures import GateRun
from kvgate.probes.nfs_server import ServerCache
from kvgate.record import RunStore

HostResults = dict[str, VolumeResult]


@pytest.fixture(scope="session")
def g2_measured(
    gate_run: GateRun,
    nic_counters_before: object,  # the storage NICs' counters are read before the first fio job
) -> dict[str, HostResults | LabError]:
    """Every pending host measured at once (the same jobs on every storage client together)."""
    del nic_counters_before
    pending, profile = gate_run.session.hosts_pending, gate_run.config.fio
    # as loaded: a field left unset stays unset (a KV layout refuses the other layout's fields)
    models = {
        w: p.model_dump(mode="json", exclude_unset=True) for w, p in gate_run.config.workload_models().items()
    }
    gate_run.store.merge_meta(  # page 1's scope: the fio matrix and what each storage workload read
        configuration={"gate_profile": profile.model_dump(mode="json"), "workload_models": models}
    )
    measure = partial(_measure_host, gate_run, profile)
    results: dict[str, HostResults | LabError] = dict(gate_run.fan_out(sorted(pending - {CLUSTER}), measure))
    for host, r in results.items():
        gate_run.session.notify(host, "measured" if not isinstance(r, LabError) else f"ERROR: {r}")
    if CLUSTER in pending:  # after the per-host runs, so they do not disturb each other
        results[CLUSTER] = _cluster(gate_run, results)
    return results


def _measure_host(run: GateRun, profile: MatrixProfile, name: str) -> HostResults:
    """The host's scratch volumes one after the other, each stored as soon as it is done."""
    inv, out = run.inventory, {}
    for vname, vol in inv.volumes_of(name).items():
        if vol.scratch:
            vut = VolumeUnderTest(
                ex=run.executors[name],
                host=inv.hosts[name],
                name=vname,
                volume=vol,
                store=run.store,
                notify=partial(run.session.notify, name),
                server_cache=ServerCache.of(inv, vname, run.executors),
            )
            out[vname] = measure_volume(vut, profile=profile, models=run.config.workload_models())
            save(run.store, out[vname])
    return out


def _cluster(run: GateRun, per_host: dict[str, HostResults | LabError]) -> HostResults | LabError:
    """The client/server aggregate of every shared scratch volume; a failed member fails it."""
    inv, executors, out = run.inventory, run.executors, {}
    for vname, hosts in shared_volumes(inv).items():
        if not inv.volumes[vname].scratch:
            continue
        if failed := [h for h in hosts if isinstance(per_host.get(h), LabError)]:
            return LabError(f"cluster aggregate of {vname} not run: {', '.join(failed)} failed")
        members = [Member(h, executors[h], inv.hosts[h]) for h in hosts]
        try:
            out[vname] = measure_cluster(
                members,
                volume=vname,
                vol=inv.volumes[vname],
                profile=run.config.fio,
                store=run.store,
                server_cache=ServerCache.of(inv, vname, executors),
            )
        except LabError as exc:
            return exc
    return out


def save(store: RunStore, r: VolumeResult) -> None:
    """The volume's measurements as an artifact and its table row in run.json, as soon as it is done."""
    data = {k: _json(m) for k, m in r.measurements.items()}
    store.artifact(r.host, f"g2/{r.volume}/measurements.json", json.dumps(data, indent=1, default=str))
    key = f"{r.host}/{r.volume}"
    store.merge_meta(g2_rows={key: row(r)}, contradictions={key: [c.model_dump() for c in r.contradictions]})


def _json(m: Measurement) -> dict[str, Any]:
    return {
        "value": m.value,
        "unit": m.unit,
        "invalid_reason": m.invalid_reason,
        "evidence": list(m.evidence),
    }


@pytest.fixture
def volume_measurements(check: G2Check, g2_measured: dict[str, HostResults | LabError]) -> Inputs:
    """The measurements of the check's volume; a host that failed makes its checks ERROR."""
    if check.ruled:
        return Inputs()
    result = g2_measured[check.host]
    if isinstance(result, LabError):
        raise LabError(f"{check.host}: G2 measurements not taken: {result}") from result
    return Inputs(result[check.subject].measurements)
