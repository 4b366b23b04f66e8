"""fio client/server with two real fio servers on 127.0.0.1, and the baseline matrix runner."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.fio_matrix import MatrixProfile
from kvgate.configuration.inventory.schema import Volume
from kvgate.probes.fio.baseline import run_matrix
from kvgate.probes.fio.client import FioServer, fio_servers, run_clients
from kvgate.probes.fio.run import RunOptions, lay_out
from kvgate.transport.local import LocalExecutor

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


def free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def test_two_fio_servers_give_per_host_and_all_clients_results(tmp_path: Path) -> None:
    ex = LocalExecutor()
    (tmp_path / "vol").mkdir()
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    opts = RunOptions(workdir=str(tmp_path / "wd"), grace_s=30)
    job = FioJob(
        name="cs", rw="randread", bs="4k", iodepth=4, size="8m", runtime_s=2, ramp_s=0, directory=vol.path
    )
    assert lay_out(ex, job, vol, opts).invalid_reason is None  # both servers then read the same files
    ports = free_ports(2)
    with fio_servers([(ex, "127.0.0.1", p) for p in ports], workdir=opts.workdir) as servers:
        cluster = run_clients(ex, job, vol, servers, opts)
    assert cluster.invalid_reason is None
    assert sorted(cluster.per_host) == sorted(f"127.0.0.1:{p}" for p in ports)
    assert cluster.all_clients is not None
    per_host_bw = [s.read.bw_bytes_per_s for s in cluster.per_host.values()]
    assert all(bw > 0 for bw in per_host_bw)
    assert cluster.all_clients.read.bw_bytes_per_s == sum(per_host_bw)
    samples = sum(s.read.clat.samples for s in cluster.per_host.values())
    assert cluster.all_clients.read.clat.samples == samples > 0
    assert cluster.all_clients.read.clat_ns(99.9) is not None
    fio_total = cluster.run.result.fio_all_clients if cluster.run.result else None
    assert fio_total is not None
    # fio's "All clients" divides the total bytes by the longest runtime; kvgate sums per-host
    # bandwidth (each host's bytes over its own runtime). The bytes must agree exactly.
    assert fio_total.read.io_bytes == cluster.all_clients.read.io_bytes


def test_a_server_that_is_not_there_makes_the_run_invalid(tmp_path: Path) -> None:
    ex = LocalExecutor()
    (tmp_path / "vol").mkdir()
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    opts = RunOptions(workdir=str(tmp_path / "wd"), grace_s=30)
    job = FioJob(name="cs", rw="read", bs="1m", size="4m", runtime_s=1, ramp_s=0, directory=vol.path)
    with fio_servers([(ex, "127.0.0.1", free_ports(1)[0])], workdir=opts.workdir) as servers:
        ghost = FioServer(ex, "127.0.0.1", free_ports(1)[0], 0)  # nobody listens there
        cluster = run_clients(ex, job, vol, [servers[0], ghost], opts)
    assert cluster.invalid_reason is not None
    assert cluster.invalid_reason.startswith(f"no result from 127.0.0.1:{ghost.port}: ")
    assert "Connection refused" in cluster.invalid_reason  # fio's words (it exits 0 all the same)
    assert list(cluster.per_host) == [servers[0].key]


def test_matrix_runs_every_cell_and_repeat_and_finds_a_knee(tmp_path: Path) -> None:
    ex = LocalExecutor()
    (tmp_path / "vol").mkdir()
    vol = Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)
    profile = MatrixProfile.model_validate(
        {
            "name": "tiny",
            "repeats": 2,
            "defaults": {"size": "8m", "runtime_s": 1, "ramp_s": 0},
            "sweep": {"name": "sw", "rw": "read", "bs": "128k", "numjobs": [1], "iodepth": [1, 4]},
        }
    )
    seen: list[tuple[str, int]] = []
    result = run_matrix(
        ex,
        profile,
        vol,
        directory=vol.path,
        opts=RunOptions(workdir=str(tmp_path / "wd"), grace_s=30),
        on_run=lambda cell, repeat, _run: seen.append((cell, repeat)),
    )
    sweep = [("sw-128k-j1-qd1", 1), ("sw-128k-j1-qd1", 2), ("sw-128k-j1-qd4", 1), ("sw-128k-j1-qd4", 2)]
    assert seen == [*sweep, ("ceiling", 1), ("ceiling", 2)]  # the best cell, run again
    metrics = {m.metric: m for m in result.measurements}
    assert {
        "sw-128k-j1-qd1.read_bw_bytes_per_s",
        "sw-128k-j1-qd4.read_bw_bytes_per_s_cv",
        "sw.knee_parallelism",
        "ceiling.read_bw_bytes_per_s",
        "ceiling.read_bw_bytes_per_s_cv",
        "ceiling.iodepth",
    } <= set(metrics)
    assert result.ceiling is not None
    assert metrics["ceiling.iodepth"].value == result.ceiling.iodepth in (1, 4)
    assert metrics["ceiling.bs_bytes"].value == 128 << 10
    assert all(m.invalid_reason is None for m in result.measurements), [
        m.invalid_reason for m in result.measurements if m.invalid_reason
    ]
    assert result.knee is not None
    assert result.knee.parallelism in (1, 4)
