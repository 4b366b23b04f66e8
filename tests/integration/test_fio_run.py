"""Real fio 3.33 through the LocalExecutor: results, aggregation, watchdog, fio's errors, cold proof.

Small files in tmp dirs, runs of 1-3 s; no test asserts a performance number
(other engineers share this 2-core machine). Refusals of unsafe targets are in
test_fio_safety_real.py, client/server and the matrix runner in test_fio_cluster.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from blockdevs import BlockLab, missing

from kvgate.base.criteria import Criterion, Verdict, judge
from kvgate.base.errors import LabError
from kvgate.configuration.fio_job import FioJob
from kvgate.configuration.inventory.schema import Volume
from kvgate.probes.fio.cold import run_measured
from kvgate.probes.fio.measure import measurements
from kvgate.probes.fio.run import FioRun, RunOptions, run_fio
from kvgate.transport.local import LocalExecutor

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


@pytest.fixture
def ex() -> LocalExecutor:
    return LocalExecutor()


@pytest.fixture
def vol(tmp_path: Path) -> Volume:
    (tmp_path / "vol").mkdir()
    return Volume(path=str(tmp_path / "vol"), kind="candidate", scratch=True)


@pytest.fixture
def opts(tmp_path: Path) -> RunOptions:
    return RunOptions(
        workdir=str(tmp_path / "wd"), grace_s=30
    )  # generous: CI shares 2 cores; watchdog tests set their own


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[BlockLab]:
    if why := missing():
        pytest.skip(why)
    blocks = BlockLab(tmp_path)
    yield blocks
    blocks.close()


def randread(vol: Volume, **kw: object) -> FioJob:
    base: dict[str, object] = {"name": "rr", "rw": "randread", "bs": "4k", "iodepth": 4, "size": "8m"}
    base |= {"runtime_s": 2, "ramp_s": 1, "directory": vol.path}
    return FioJob(**(base | kw))  # type: ignore[arg-type]


def test_job_gives_bandwidth_iops_and_fios_own_percentiles(
    ex: LocalExecutor, vol: Volume, opts: RunOptions
) -> None:
    run = run_fio(ex, randread(vol), vol, opts)
    assert run.invalid_reason is None
    summary = run.summary()
    assert summary.read.bw_bytes_per_s > 0
    assert summary.read.iops > 0
    p50, p99, p999 = (summary.read.clat_ns(p) for p in (50, 99, 99.9))
    assert p50 is not None
    assert p99 is not None
    assert p999 is not None
    assert 0 < p50 <= p99 <= p999
    assert run.result is not None
    job = run.result.jobs[0]
    assert job.read.fio_clat_percentiles_ns  # fio printed its own: kvgate's merge reproduces them exactly
    assert all(job.read.clat.percentile_ns(p) == v for p, v in job.read.fio_clat_percentiles_ns)
    assert run.stderr == ""  # fio's stderr kept apart from the JSON, and empty on success
    assert set(run.artifacts()) == {"job.fio", "fio.stdout", "fio.stderr", "fio.json"}
    assert "time_based=1" in run.artifacts()["job.fio"]
    assert run.result.fio_version.startswith("fio-3.")
    assert run.elapsed_s < run.deadline_s


def test_multi_job_aggregate_is_the_sum_of_jobs(ex: LocalExecutor, vol: Volume, opts: RunOptions) -> None:
    run = run_fio(ex, randread(vol, numjobs=3, runtime_s=1, ramp_s=0), vol, opts)
    assert run.result is not None
    jobs = run.result.jobs
    assert len(jobs) == 3
    assert run.summary().read.bw_bytes_per_s == sum(j.read.bw_bytes_per_s for j in jobs)
    assert run.summary().read.clat.samples == sum(j.read.clat.samples for j in jobs) > 0


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2][:1]
    except FileNotFoundError:
        return True
    return state == "Z"


def running_with(text: str) -> list[int]:
    """Live processes whose command line mentions ``text``."""
    pids = []
    for path in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text.encode() in path.read_bytes() and not gone(int(path.parent.name)):
                pids.append(int(path.parent.name))
        except OSError:
            continue
    return pids


def test_watchdog_kills_an_overrunning_fio_and_the_run_is_invalid(
    ex: LocalExecutor, vol: Volume, tmp_path: Path
) -> None:
    """A 60-s think time stalls the job: the watchdog kills fio and its job process (fio #1414, #1004).

    (exec_prerun would hang it too, but a job file that runs commands is refused: kvgate.probes.fio.safety.)
    """
    opts = RunOptions(workdir=str(tmp_path / "wd"), grace_s=1)
    job = randread(vol, runtime_s=1, ramp_s=0, extra=(("thinktime", "60s"),))
    run = run_fio(ex, job, vol, opts)
    assert run.result is None
    assert run.invalid_reason is not None
    assert run.invalid_reason.startswith("fio overran its 2 s deadline and the watchdog killed it")
    assert run.watchdog is not None
    seen = run.watchdog.at("deadline")
    assert "fio" in {s.comm for s in seen}
    assert running_with(opts.workdir) == []  # nor fio's job process, which is in its own session
    assert run.elapsed_s < 10  # not the 60 s of the hung prerun
    assert run.artifacts()["watchdog.txt"].startswith("deadline ")  # the evidence, stored raw
    assert all(gone(s.pid) for s in seen)
    m = measurements("rr", [run])[0]
    assert judge(Criterion("G2-FIO-1", m.metric, ">=", 1), m).verdict is Verdict.INVALID


def fio_tree(root: int) -> list[int]:
    """``root`` and its descendants, from /proc."""
    tree, changed = {root}, True
    while changed:
        changed = False
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                pid, ppid = int(stat.parent.name), int(stat.read_text().rpartition(") ")[2].split()[1])
            except (OSError, ValueError):
                continue
            if ppid in tree and pid not in tree:
                tree.add(pid)
                changed = True
    return sorted(tree)


def run_in_thread(fn: object) -> tuple[threading.Thread, list[FioRun]]:
    out: list[FioRun] = []
    thread = threading.Thread(target=lambda: out.append(fn()))  # type: ignore[operator]
    thread.start()
    return thread, out


def wait_for(path_glob: Path, pattern: str, timeout_s: float = 10) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := sorted(path_glob.glob(pattern)):
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"{pattern} did not appear under {path_glob}")


def test_watchdog_records_a_stopped_fio_as_state_t(ex: LocalExecutor, vol: Volume, tmp_path: Path) -> None:
    opts = RunOptions(workdir=str(tmp_path / "wd"), grace_s=1)
    thread, out = run_in_thread(lambda: run_fio(ex, randread(vol, runtime_s=1, ramp_s=0), vol, opts))
    pid = int(wait_for(Path(opts.workdir), "*/fio.pid").read_text())
    time.sleep(0.7)  # let fio fork its job process
    for p in fio_tree(pid):
        os.kill(p, signal.SIGSTOP)
    thread.join(30)
    run = out[0]
    assert run.watchdog is not None
    assert {s.state for s in run.watchdog.at("deadline")} == {"T"}
    assert "state T" in (run.invalid_reason or "")
    assert run.watchdog.survivors == ()


def test_watchdog_detects_d_state_on_a_frozen_filesystem(
    ex: LocalExecutor, lab: BlockLab, tmp_path: Path
) -> None:
    """A writer on a frozen fs sleeps uninterruptibly: the watchdog records D and the survivor."""
    opts = RunOptions(workdir=str(tmp_path / "wd"), grace_s=1)
    mnt = lab.mount(_fresh_ext4(lab), tmp_path / "mnt")
    vol = Volume(path=str(mnt), kind="candidate", scratch=True)
    job = FioJob(name="w", rw="write", bs="4k", size="8m", runtime_s=1, ramp_s=0, directory=str(mnt))
    job = job.replace(ioengine="psync", direct=False)
    thread, out = run_in_thread(lambda: run_fio(ex, job, vol, opts))
    wait_for(Path(opts.workdir), "*/fio.pid")
    time.sleep(0.5)
    lab.freeze(mnt)
    thread.join(30)  # returns although a writer is stuck: fio's output goes to files, not our pipes
    run = out[0]
    assert run.watchdog is not None
    assert run.watchdog.d_state
    assert run.watchdog.survivors
    assert all(not gone(s.pid) for s in run.watchdog.survivors)  # still there, in D, until the thaw
    assert "D-state (uninterruptible I/O): " in (run.invalid_reason or "")
    assert "alive after KILL: none" not in (run.invalid_reason or "")
    lab.thaw(mnt)


def _fresh_ext4(lab: BlockLab) -> str:
    dev = lab.loop(size_mib=64)
    lab.mkfs(dev)
    return dev


def test_fio_error_text_makes_the_run_invalid(ex: LocalExecutor, vol: Volume, opts: RunOptions) -> None:
    run = run_fio(ex, randread(vol, bs="8k", size="4k"), vol, opts)
    assert run.result is None
    assert "size too small, must not be less than minimum block size" in (run.invalid_reason or "")


def test_missing_target_directory_is_invalid_with_fios_words(
    ex: LocalExecutor, vol: Volume, opts: RunOptions
) -> None:
    run = run_fio(ex, randread(vol, directory=f"{vol.path}/absent"), vol, opts)
    assert run.invalid_reason is not None
    assert f"{vol.path}/absent is not a directory" in run.invalid_reason


def test_io_errors_reported_by_fio_make_the_run_invalid(
    ex: LocalExecutor, lab: BlockLab, opts: RunOptions
) -> None:
    """512-byte O_DIRECT reads on a 4 KiB-sector device: EINVAL, error lines before the JSON."""
    dev = lab.loop(size_mib=16, sector=4096)
    vol = Volume(path="/srv/none", kind="candidate", device=dev)  # reading the declared device is safe
    job = FioJob(name="e", rw="read", bs="512", size="1m", runtime_s=1, ramp_s=0, filename=dev)
    run = run_fio(ex, job.replace(extra=(("thread", "1"),)), vol, opts)
    assert run.result is not None
    assert "io_u error" in run.result.prefix
    assert run.invalid_reason is not None
    assert run.invalid_reason.startswith("fio reported job e: error 22")
    assert "Invalid argument" in run.invalid_reason


def test_cold_direct_read_is_proven_by_device_counters(
    ex: LocalExecutor, vol: Volume, opts: RunOptions
) -> None:
    job = FioJob(
        name="cold", rw="read", bs="1m", iodepth=4, size="32m", runtime_s=2, ramp_s=0, directory=vol.path
    )
    measured = run_measured(ex, job, vol, opts)
    assert measured.layout is not None
    assert measured.layout.invalid_reason is None
    assert measured.run.invalid_reason is None, measured.run.invalid_reason
    proof = measured.proof
    st = os.stat(vol.path)
    assert proof.volume is not None
    assert (
        proof.volume.head
        == Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve().name
    )
    assert proof.drop is not None
    assert proof.drop.dropped
    assert proof.drop.how == "root"
    assert proof.device_read_bytes is not None
    assert proof.device_read_bytes >= 0.9 * proof.fio_read_bytes > 0
    assert measured.kernel is not None
    assert "error" not in measured.kernel, measured.kernel  # its window's storage lines were read
    assert measured.kernel["volume_lines"] == []  # none here: one would make the run INVALID
    assert measured.invalid_reason is None


def test_buffered_read_of_a_small_working_set_is_invalid(
    ex: LocalExecutor, vol: Volume, opts: RunOptions
) -> None:
    job = randread(vol, direct=False, runtime_s=1, ramp_s=0, extra=(("invalidate", "0"),))
    measured = run_measured(ex, job, vol, opts)
    assert measured.run.invalid_reason is None  # fio itself was fine...
    assert measured.proof.device_read_bytes is not None  # ...the counters were taken...
    assert "buffered job with a working set of 8388608 bytes" in (
        measured.invalid_reason or ""
    )  # ...not cold


def test_a_work_directory_others_could_write_in_is_refused(
    ex: LocalExecutor, vol: Volume, tmp_path: Path
) -> None:
    """fio (root on a lab) reads the checked job file from there: nobody else may be able to swap it."""
    wd = tmp_path / "shared"
    wd.mkdir()
    wd.chmod(0o777)
    with pytest.raises(LabError, match="is not ours alone"):
        run_fio(ex, randread(vol), vol, RunOptions(workdir=str(wd)))
    assert list(wd.iterdir()) == []
    assert list(Path(vol.path).iterdir()) == []
