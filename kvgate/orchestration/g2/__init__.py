"""G2 single-node baseline: each host's scratch volumes reach their storage baseline.

    plan.py          per (host, scratch volume): the fio matrix's and the agent workloads' checks, each
                     criterion from the volume's ``expect:`` (a metric without one must still be trusted)
    fixtures.py      every host's scratch volumes measured at once, then each check handed its numbers
    measure.py       one volume of one host: the fio matrix, then the agent workloads; raw outputs
                     stored as they arrive
    ceiling.py       the read ceiling is the device's: the readers' I/Os in flight the sweep must cover, a
                     faster G2 read raising it (with why), and G2's figures that contradict each other
    workloads.py     KV restore, model load, checkpoint through the agent (VolumeUnderTest); a read the
                     device counters do not account for, or a silent O_DIRECT fallback, is INVALID
    cluster.py       the cluster aggregate: one sequential read on every storage client at once
                     (fio --server / --client), proven cold on every device
    nic_counters.py  the storage NICs' discard, pause and CNP counters across the baseline (ethtool -S,
                     RDMA hw_counters; names per driver): a discard FAILs, pauses and CNPs are shown
    nic_fixtures.py  the NIC counters' snapshots: before the first fio job, after the last
    report_rows.py   what G2 keeps in run.json for its report (``g2_rows``): each volume's numbers

G2's figures are the site's baseline: G3 compares with them and ``kvgate plan`` plans from them.
"""

from __future__ import annotations

from kvgate.orchestration.g2.nic_counters import evaluate_nic, nic_plan
from kvgate.orchestration.g2.plan import plan

__all__ = ["evaluate_nic", "nic_plan", "plan"]
