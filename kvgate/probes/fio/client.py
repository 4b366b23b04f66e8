"""Multi-host fio: fio's own client/server mode, parsed per host and for all clients together.

``fio --server`` runs on every storage client; one driver host runs ``fio
--client=ip:h1,port job --client=ip:h2,port job`` so the jobs start together.
fio's client mode reports one ``client_stats`` entry per job per server plus an
"All clients" entry that carries no histogram bins, so kvgate builds the cluster
figure itself: bandwidth and IOPS summed, latency histograms merged.

fio exits 0 when a server cannot be reached and reports only the others, so a
run without a result from every server is INVALID. The watchdog bounds the
driver's fio client; servers are stopped (TERM, then KILL) when ``fio_servers``
exits, but D-state evidence is gathered on the driver only.

Field notes (fio #515, #1881) prefer independent per-host runs over SSH; for that
path, run ``run_fio`` on every host and ``merge`` the summaries (``cluster_summary``).

Usage, on a real host::

    from kvgate.transport.local import LocalExecutor
    with fio_servers([(LocalExecutor(), "127.0.0.1", 18765)]) as servers:
        run = run_clients(LocalExecutor(), job, volume, servers)
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from kvgate.base.errors import LabError
from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.inventory import Volume
from kvgate.probes.fio.parse import Summary, merge
from kvgate.probes.fio.run import FioRun, RunOptions, checked_jobfile, execute, fio_messages, resolve_ioengine
from kvgate.transport import CANCEL, Executor

DEFAULT_PORT = 8765  # fio's own default


@dataclass(frozen=True)
class FioServer:
    """A running ``fio --server`` on a host."""

    ex: Executor
    address: str
    port: int
    pid: int

    @property
    def endpoint(self) -> str:
        """The ``--client=`` value (``ip:`` forces IPv4 parsing, as ``--server`` does)."""
        return f"ip:{self.address},{self.port}"

    @property
    def key(self) -> str:
        """How fio names this server in client_stats: "address:port"."""
        return f"{self.address}:{self.port}"


def _listening(ex: Executor, port: int) -> bool:
    """True when a TCP socket is in LISTEN state on ``port`` (/proc/net/tcp, state 0A)."""
    text = ex.run("cat /proc/net/tcp /proc/net/tcp6").stdout
    want = f":{port:04X}"
    return any(f[1].endswith(want) and f[3] == "0A" for ln in text.splitlines() if len(f := ln.split()) > 3)


def start_server(
    ex: Executor,
    address: str,
    port: int = DEFAULT_PORT,
    *,
    workdir: str = "/tmp/kvgate-fio",
    wait_s: float = 10,
) -> FioServer:
    """Start ``fio --server`` daemonized on the host and wait until it listens."""
    pidfile = f"{workdir}/fio-server-{port}.pid"
    ex.run("mkdir -p %s && rm -f %s", workdir, pidfile, check=True)
    ex.run("fio --server=%s --daemonize=%s", f"ip:{address},{port}", pidfile, check=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        pid = ex.run("cat %s", pidfile).stdout.strip()
        if pid and _listening(ex, port):
            return FioServer(ex, address, port, int(pid))
        time.sleep(0.1)
    raise LabError(f"{ex.host}: fio --server on {address}:{port} did not listen within {wait_s:g} s")


def stop_servers(servers: Sequence[FioServer], *, wait_s: float = 5) -> None:
    """TERM every server at once, then KILL any that lingers past ``wait_s`` (also after Ctrl-C)."""
    with CANCEL.cleanup():
        _stop(servers, wait_s)


def _stop(servers: Sequence[FioServer], wait_s: float) -> None:
    for s in servers:
        s.ex.run("kill %s", s.pid)
    deadline = time.monotonic() + wait_s
    for s in servers:
        while time.monotonic() < deadline and _running(s.ex, s.pid):
            time.sleep(0.1)
        s.ex.run("kill -9 %s", s.pid)


def _running(ex: Executor, pid: int) -> bool:
    """The process exists and is not a zombie."""
    res = ex.run("cat %s", f"/proc/{pid}/stat")
    return res.ok and not res.stdout.rpartition(") ")[2].startswith("Z")


@contextmanager
def fio_servers(
    specs: Sequence[tuple[Executor, str, int]], *, workdir: str = "/tmp/kvgate-fio"
) -> Iterator[list[FioServer]]:
    """Start one server per (executor, address, port); always stop them."""
    servers: list[FioServer] = []
    try:
        for ex, address, port in specs:
            servers.append(start_server(ex, address, port, workdir=workdir))
        yield servers
    finally:
        stop_servers(servers)


@dataclass(frozen=True)
class ClientRun:
    """A client-mode run: the raw run, one summary per server and the cluster aggregate."""

    run: FioRun
    per_host: Mapping[str, Summary]
    all_clients: Summary | None
    invalid_reason: str | None


def run_clients(
    driver: Executor,
    job: FioJob,
    volume: Volume,
    servers: Sequence[FioServer],
    opts: RunOptions | None = None,
) -> ClientRun:
    """Run ``job`` on every server at once from ``driver``; every server must report."""
    opts = opts or RunOptions()
    notes: tuple[str, ...] = ()
    for s in servers:
        job, more = resolve_ioengine(s.ex, job)
        notes += more
    text = job.to_jobfile()  # every server reads this one file: each checks it on its own host
    checked = [checked_jobfile(s.ex, text, volume, opts) for s in servers]
    if not checked:
        raise ValueError("run_clients needs at least one fio server")
    run = execute(driver, job, opts, jobfile=checked[0], clients=[s.endpoint for s in servers], notes=notes)
    per_host = run.result.per_host() if run.result else {}
    missing = [s.key for s in servers if s.key not in per_host]
    prefix = run.result.prefix if run.result else ""
    lost = f"no result from {', '.join(missing)}: {fio_messages(prefix, run.stderr)}" if missing else None
    reason = run.invalid_reason or lost
    all_clients = merge(per_host.values()) if per_host else None
    return ClientRun(run, per_host, all_clients, reason)


def cluster_summary(runs: Mapping[str, FioRun]) -> Summary:
    """One cluster figure from independent per-host runs of the same job (all must be valid)."""
    bad = {h: r.invalid_reason for h, r in runs.items() if r.invalid_reason}
    if bad:
        raise ValueError(f"cannot aggregate invalid runs: {bad}")
    return merge(r.summary() for r in runs.values())
