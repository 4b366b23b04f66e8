"""fio, done properly: typed jobs, safe targets, a watchdog, json+ parsed and aggregated by kvgate.

safety.py    the rendered job file read back as fio would; file targets through kvgate.probes.scratch
watchdog.py  host-side wrapper: pid file, /proc/<pid>/stat evidence, TERM then KILL
run.py       upload + run over an Executor, stderr apart, JSON located defensively
hist.py      fio's log-linear latency buckets: merge and percentiles like fio
parse.py     json+ → per-job results → kvgate aggregates (units in names)
cold.py      drop caches, device read bytes around every job, proof of cold
client.py    fio --server / --client across hosts, per host and all clients
measure.py   results → kvgate.base.criteria.Measurement (INVALID reasons carried)
baseline.py  run a whole matrix profile on one volume: every cell, every repeat, cold; the sweep's knee
ceiling.py   the device's read ceiling: the sweep carried on to the readers' I/Os in flight and a
             plateau, its best cell (bs × numjobs × iodepth) run again

The job and G2's matrix are data: kvgate/configuration/fio_job.py (FioJob → jobfile, time_based +
runtime + ramp < runtime, always; offered here too) and kvgate/configuration/fio_matrix.py (the
baseline matrix profile, workloads/fio/*.yaml: CV, saturation knee).
"""

from kvgate.probes.fio.baseline import run_matrix
from kvgate.probes.fio.ceiling import CEILING_CELL, CEILING_MARGIN, Reach, configuration
from kvgate.probes.fio.client import DEFAULT_PORT, fio_servers, run_clients
from kvgate.probes.fio.cold import MeasuredRun
from kvgate.probes.fio.run import RunOptions, lay_out

__all__ = [
    "CEILING_CELL",
    "CEILING_MARGIN",
    "DEFAULT_PORT",
    "MeasuredRun",
    "Reach",
    "RunOptions",
    "configuration",
    "fio_servers",
    "lay_out",
    "run_clients",
    "run_matrix",
]
