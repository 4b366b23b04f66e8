"""The cluster aggregate of G2: one sequential-read job on every storage client at once,
through fio's own client/server mode (`fio --server` on each host, `--client` from one).

Per-host figures and the aggregate are parsed from the one client-mode output;
caches are dropped on every host first and device read bytes counted around the
job on every distinct (host address, device), so the aggregate is proven cold
like any other G2 read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kvgate.base.criteria import Measurement
from kvgate.base.errors import LabError
from kvgate.configuration.fio_matrix import MatrixProfile
from kvgate.configuration.inventory import CLUSTER, Host, Volume
from kvgate.orchestration.g2.measure import VolumeResult, remove_work_dir
from kvgate.probes.evidence import Counts, cold_reason
from kvgate.probes.fio import DEFAULT_PORT, RunOptions, fio_servers, lay_out, run_clients
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.nfs_server import ServerCache
from kvgate.probes.scratch import ScratchDir, checked, create, run_directory
from kvgate.record import RunStore
from kvgate.transport import Executor


@dataclass(frozen=True)
class Member:
    """One storage client taking part in the cluster job."""

    name: str
    ex: Executor
    host: Host


def _device_bytes(members: list[Member], directory: str) -> dict[tuple[str, str], int]:
    """Read bytes so far of each distinct device carrying the volume (hosts sharing one count it once).

    On NFS each client counts what it read from the server (mountstats): summed over the clients.
    """
    out: dict[tuple[str, str], int] = {}
    for m in members:
        he = HostEvidence(m.ex, sudo=m.host.sudo)
        snap = he.snapshot(he.resolve(directory))
        for name, (read, _written) in snap.get("devices", {}).items():
            out[(m.host.address, name)] = read
        if snap.get("nfs"):
            out[(m.host.address, f"nfs:{snap['nfs']['mount_point']}")] = snap["nfs"]["counts"].get(
                "server_read", 0
            )
    return out


def measure_cluster(
    members: list[Member],
    *,
    volume: str,
    vol: Volume,
    profile: MatrixProfile,
    store: RunStore,
    server_cache: ServerCache | None = None,
) -> VolumeResult:
    """Run the profile's first sequential-read job on all members together; aggregate and per host."""
    directory = run_directory(vol, gate="g2", host=CLUSTER, run=store.path.name)
    spec_cell = next(c for c, s in profile.jobs.items() if s.rw == "read")
    job = profile.fio_jobs(directory, tag=CLUSTER)[spec_cell]
    specs = [(m.ex, m.host.address, DEFAULT_PORT + i) for i, m in enumerate(members)]
    driver, result = members[0], VolumeResult(CLUSTER, volume)
    made: list[tuple[Member, ScratchDir]] = []
    try:
        for m in members:  # laid out one host at a time: on a shared volume the files are laid out once
            made.append((m, checked(m.ex, vol, directory)))  # the scratch check, before anything is made
            create(m.ex, made[-1][1])
            layout = lay_out(m.ex, job, vol, RunOptions(sudo=m.host.sudo))
            if layout.invalid_reason:
                raise LabError(
                    f"{m.name}: laying out the cluster job's files failed: {layout.invalid_reason}"
                )
        with fio_servers(specs) as servers:
            for m in members:
                HostEvidence(m.ex, sudo=m.host.sudo).drop()
            before = _device_bytes(members, directory)
            nfs = any(k.startswith("nfs:") for _, k in before)
            control = server_cache or ServerCache(volume, None, None)
            server = control.make_cold(data_bytes=job.working_set_bytes) if nfs else None  # one file set
            run = run_clients(driver.ex, job, vol, servers, RunOptions(sudo=driver.host.sudo))
            after = _device_bytes(members, directory)
    finally:
        for m, d in made:
            remove_work_dir(m.ex, d)
    device = sum(after[k] - before.get(k, after[k]) for k in after) if after else None
    evidence = [
        store.artifact(CLUSTER, f"g2/{volume}/fio-clients/{n}", t) for n, t in run.run.artifacts().items()
    ]
    counts = Counts(device, None, None, counted_on="the devices of every member")
    fio_read = run.all_clients.read.io_bytes if run.all_clients else 0
    reason = (
        run.invalid_reason
        or cold_reason(counts, needed_bytes=fio_read, what="fio read", caches_dropped=True)
        or (server.reason if server else None)
    )
    ev = (
        *evidence,
        store.artifact(
            CLUSTER,
            f"g2/{volume}/fio-clients/device-bytes.json",
            json.dumps(
                {
                    "device_read_bytes": device,
                    "devices": sorted(map(str, after)),
                    "nfs_server_cache": server.how if server else None,
                }
            ),
        ),
    )
    metric = f"{CLUSTER}.{spec_cell}.read_bw_bytes_per_s"
    bw = run.all_clients.read.bw_bytes_per_s if run.all_clients else None
    result.add([Measurement(metric, bw, "B/s", ev, reason)])
    names = {s.key: m.name for s, m in zip(servers, members, strict=True)}
    result.add(
        [
            Measurement(
                f"{CLUSTER}.{spec_cell}.{names.get(k, k)}.read_bw_bytes_per_s",
                s.read.bw_bytes_per_s,
                "B/s",
                ev,
                reason,
            )
            for k, s in run.per_host.items()
        ]
    )
    return result
