"""The G2 plan: per (host, scratch volume), the fio baseline and the storage-level workloads.

Each criterion comes from the volume's `expect:` in the inventory; a metric
without a site threshold is still measured and must be trusted (`> 0`, never
PASS when INVALID or missing) so it can serve as the site baseline for G3.

>>> from kvgate.configuration.gateconfig import in_memory
>>> from kvgate.configuration.inventory import Inventory
>>> inv = Inventory.model_validate({"site": "s", "scale": "smoke",
...     "hosts": {"h": {"roles": ["storage-client"]}},
...     "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}}})
>>> [c.check for c in plan(in_memory(inv))][:2]
['volume[v].fio.seqread-1m.bw', 'volume[v].fio.seqwrite-1m.bw']
"""

from __future__ import annotations

from kvgate.base.criteria import Criterion
from kvgate.base.units import GB
from kvgate.configuration.fio_matrix import MatrixProfile
from kvgate.configuration.gateconfig import GateConfig
from kvgate.configuration.inventory import CLUSTER, Inventory, Volume, VolumeExpect
from kvgate.judgement import RECORDED_BASELINE, Check, Ruling
from kvgate.probes.fio import CEILING_CELL

MEASURED = RECORDED_BASELINE  # no site threshold: the figure is the site baseline


G2Check = Check[None]  # subject: the volume; key: the metric; status_key: its workload's failure


def g2_check(host: str, volume: str, check: str, criterion: Criterion, skip: str | None) -> G2Check:
    """One G2 criterion on one host's volume; a workload that failed leaves "<workload>.status"."""
    metric = criterion.metric
    return Check(
        host=host,
        check=check,
        criterion=criterion,
        spec=None,
        key=metric,
        status_key=metric.split(".")[0] + ".status",
        subject=volume,
        ruled=Ruling.skip(skip) if skip else None,
    )


def _at_least(
    rule: str, metric: str, unit: str, value: float | None, src: str, *, scale: float = 1
) -> Criterion:
    if value is None:
        return Criterion(rule, metric, ">", 0, unit, source=MEASURED)
    return Criterion(rule, metric, ">=", value * scale, unit, source=src)


def _seq_read(inv: Inventory, host: str, name: str, vol: Volume) -> Criterion:
    metric, e = "seqread-1m.read_bw_bytes_per_s", vol.expect
    src = f"inventory: volumes.{name}.expect"
    if e.min_seq_read_gb_per_s is not None:
        return _at_least(
            "G2-FIO-1", metric, "B/s", e.min_seq_read_gb_per_s, f"{src}.min_seq_read_gb_per_s", scale=GB
        )
    rate = inv.line_rate_bytes_per_s(host)
    if e.line_rate_fraction is not None and rate is not None:
        why = f"{src}.line_rate_fraction={e.line_rate_fraction} × {rate / GB:.2f} GB/s RDMA line rate"
        return Criterion("G2-FIO-1", metric, ">=", e.line_rate_fraction * rate, "B/s", source=why)
    return _at_least("G2-FIO-1", metric, "B/s", None, src)


def volume_checks(inv: Inventory, host: str, name: str, vol: Volume, profile: MatrixProfile) -> list[G2Check]:
    """Every G2 check of one volume of one host."""
    e, src = vol.expect, f"inventory: volumes.{name}.expect"
    crits = [
        ("fio.seqread-1m.bw", _seq_read(inv, host, name, vol)),
        (
            "fio.seqwrite-1m.bw",
            _at_least(
                "G2-FIO-2",
                "seqwrite-1m.write_bw_bytes_per_s",
                "B/s",
                e.min_seq_write_gb_per_s,
                f"{src}.min_seq_write_gb_per_s",
                scale=GB,
            ),
        ),
        (
            "fio.randread-4k.iops",
            _at_least(
                "G2-FIO-3",
                "randread-4k.read_iops",
                "IOPS",
                e.min_rand_read_kiops,
                f"{src}.min_rand_read_kiops",
                scale=1000,
            ),
        ),
    ]
    if e.max_rand_read_p99_ms is not None:
        p99 = Criterion(
            "G2-FIO-4",
            "randread-4k.read_clat_p99_ns",
            "<=",
            e.max_rand_read_p99_ms * 1e6,
            "ns",
            source=f"{src}.max_rand_read_p99_ms",
        )
        crits.append(("fio.randread-4k.p99", p99))
    max_cv, cv_src = (
        (e.max_cv, f"{src}.max_cv") if e.max_cv else (profile.max_cv, f"profile {profile.name}.max_cv")
    )
    for cell, spec in profile.jobs.items():
        direction = "write" if "write" in spec.rw else "read"
        cv = Criterion("G2-FIO-5", f"{cell}.{direction}_bw_bytes_per_s_cv", "<=", max_cv, source=cv_src)
        crits.append((f"fio.{cell}.cv", cv))
    if profile.sweep:
        knee = f"{profile.sweep.name}.knee_bw_bytes_per_s"
        crits.append(("fio.sweep.knee", _at_least("G2-FIO-6", knee, "B/s", None, src)))
        # G3's bound for an impossible restore: the most the device was seen to deliver in one run, by fio
        # or an agent workload (not fio's alone: a reader found a KV restore's figure under "fio.ceiling")
        best = f"{CEILING_CELL}.best_read_bw_bytes_per_s"
        crits.append(("best-single-read.bw", _at_least("G2-FIO-8", best, "B/s", None, src)))
    crits += workload_criteria(e, src)
    skip = None if vol.scratch else "volume is not marked scratch: kvgate writes only to scratch volumes"
    return [g2_check(host, name, f"volume[{name}].{c}", crit, skip) for c, crit in crits]


def workload_criteria(e: VolumeExpect, src: str) -> list[tuple[str, Criterion]]:
    """The storage-level workloads: KV restore, model load, checkpoint (kvgate.probes.agent)."""
    return [
        (
            "kv_restore.parallel.bw",
            _at_least(
                "G2-KV-1",
                "kv_restore.parallel.read_bw_bytes_per_s",
                "B/s",
                e.min_kv_restore_gb_per_s,
                f"{src}.min_kv_restore_gb_per_s",
                scale=GB,
            ),
        ),
        (
            "kv_restore.serial.bw",
            _at_least("G2-KV-2", "kv_restore.serial.read_bw_bytes_per_s", "B/s", None, src),
        ),
        (
            "kv_restore.checksums",
            Criterion("G2-KV-3", "kv_restore.corrupt_chunks", "==", 0, source="must be 0"),
        ),
        (
            "model_load.parallel.bw",
            _at_least(
                "G2-ML-1",
                "model_load.parallel.read_bw_bytes_per_s",
                "B/s",
                e.min_model_load_gb_per_s,
                f"{src}.min_model_load_gb_per_s",
                scale=GB,
            ),
        ),
        (
            "model_load.checksums",
            Criterion("G2-ML-2", "model_load.corrupt_cells", "==", 0, source="must be 0"),
        ),
        (
            "checkpoint.write.bw",
            _at_least(
                "G2-CK-1",
                "checkpoint.write_bw_bytes_per_s",
                "B/s",
                e.min_checkpoint_write_gb_per_s,
                f"{src}.min_checkpoint_write_gb_per_s",
                scale=GB,
            ),
        ),
        ("checkpoint.verify", Criterion("G2-CK-2", "checkpoint.corrupt_shards", "==", 0, source="must be 0")),
    ]


def shared_volumes(inventory: Inventory) -> dict[str, list[str]]:
    """Volumes mounted by two or more hosts, with those hosts: they get a cluster aggregate."""
    users: dict[str, list[str]] = {}
    for host in inventory.hosts:
        for name in inventory.volumes_of(host):
            users.setdefault(name, []).append(host)
    return {v: hosts for v, hosts in users.items() if len(hosts) > 1}


def cluster_check(name: str, vol: Volume, profile: MatrixProfile) -> G2Check:
    """Every client's sequential read at once through fio client/server mode: the aggregate."""
    cell = next(c for c, s in profile.jobs.items() if s.rw == "read")
    crit = Criterion("G2-FIO-7", f"cluster.{cell}.read_bw_bytes_per_s", ">", 0, "B/s", source=MEASURED)
    skip = None if vol.scratch else "volume is not marked scratch: kvgate writes only to scratch volumes"
    return g2_check(CLUSTER, name, f"volume[{name}].fio.cluster.{cell}.bw", crit, skip)


def plan(config: GateConfig) -> list[G2Check]:
    """G2 checks for every host and every volume it mounts, then the cluster aggregates (the fio
    matrix: the configuration's, holding the jobs these criteria read)."""
    inventory, profile = config.inventory.inventory, config.fio
    per_host = [
        check
        for host in inventory.hosts
        for name, vol in inventory.volumes_of(host).items()
        for check in volume_checks(inventory, host, name, vol, profile)
    ]
    shared = shared_volumes(inventory)
    return per_host + [cluster_check(v, inventory.volumes[v], profile) for v in shared]
