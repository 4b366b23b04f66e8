"""G4's soak under faults, on a real host behind a real link (issue 26's fault matrix).

The host is a network namespace with its own sshd (netns.py); the "engine" is kvgate's null
OpenAI server started inside that namespace in its own process group, so the soak's load
stays on the host while its link to the controller breaks. The soak is the agent's own
(agentctl start, then polls), a few windows of a few seconds. Each test prints its figures
(`pytest -s`); docs/reliability.md records them.

Packet loss is the kernel's: iptables' ``statistic`` match drops packets at random on the
host's end of the link (this kernel has no sch_netem for ``tc qdisc ... netem loss``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from netns import FarHost, unavailable
from nullserver import SERVE
from sshd import write_known_hosts

from kvgate.base.errors import CommandTimeout, LabError, TransportError
from kvgate.probes import agentctl
from kvgate.probes.agent.soak_sample import group_pids
from kvgate.transport.liveness import DEAD_AFTER_S
from kvgate.transport.ssh import SSHExecutor

pytestmark = [
    pytest.mark.timeout(150),
    pytest.mark.skipif(unavailable() is not None, reason=f"network namespaces: {unavailable()}"),
]

REPO = Path(__file__).resolve().parents[2]
ENGINE_PORT = 19300  # inside the host's own namespace: no other test's port can clash
WINDOW_S = 2


@pytest.fixture
def far(tmp_path: Path) -> Iterator[FarHost]:
    with FarHost.create(tmp_path / "far") as host:
        yield host


@pytest.fixture
def far_ex(far: FarHost, tmp_path: Path) -> Iterator[SSHExecutor]:
    assert far.server is not None
    known = write_known_hosts(tmp_path / "known_hosts", [far.server])
    with SSHExecutor("far", far.host(known)) as ex:
        yield ex


@pytest.fixture
def engine(far: FarHost) -> Iterator[subprocess.Popen[str]]:
    """The null server inside the host's namespace: its own session and process group."""
    argv = ["ip", "netns", "exec", far.netns, *SERVE]
    argv += ["--port", str(ENGINE_PORT), "--first-token-delay-ms", "5", "--token-delay-ms", "1"]
    env = os.environ | {"PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, start_new_session=True, text=True, env=env)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("listening")
    yield proc
    if group_pids(proc.pid):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def soak_spec(engine: subprocess.Popen[str], cache_dir: Path, **over: Any) -> dict[str, Any]:
    cache_dir.mkdir(exist_ok=True)
    return {
        "urls": [f"http://127.0.0.1:{ENGINE_PORT}"],
        "model": "null",
        "duration_s": 10,
        "window_s": WINDOW_S,
        "min_windows": 3,
        "concurrency": 2,
        "prompt_tokens": 64,
        "max_tokens": 8,
        "canary_prompts": 1,
        "canary_max_tokens": 4,
        "logprobs": 2,
        "salt": "fault-test",
        "volume": None,
        "engines": [
            {"pgid": engine.pid, "cache_dir": str(cache_dir), "metrics_url": None, "hit_counter": None}
        ],
    } | over


class Follower:
    """The controller's side: polls one job, keeping every event and how long each poll took."""

    def __init__(self, ex: SSHExecutor, job: agentctl.RemoteJob) -> None:
        self.ex, self.job = ex, job
        self.offset, self.events, self.finished = 0, [], False
        self.poll_s: list[float] = []  # every poll's wall time, failed ones included
        self.failed: list[str] = []  # each failed poll's error

    def poll(self) -> None:
        start = time.monotonic()
        try:
            events, self.offset, self.finished = agentctl.poll(self.ex, self.job, self.offset)
            self.events += events
        except (TransportError, CommandTimeout) as exc:
            self.failed.append(str(exc))
        finally:
            self.poll_s.append(time.monotonic() - start)

    def until(self, done: Any, timeout_s: float, interval_s: float = 0.5) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < deadline, f"not done within {timeout_s} s: {self.failed[-3:]}"
            assert not self.finished, f"the job ended first: {self.events[-1]}"
            self.poll()
            time.sleep(interval_s)

    def windows(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == "window"]


def start(ex: SSHExecutor, data: dict[str, Any], tmp_path: Path, root: Path | None = None) -> Follower:
    state_root = str(root or tmp_path / "jobs")
    return Follower(ex, agentctl.start(ex, "soak", data, python=sys.executable, state_root=state_root))


def assert_every_window_once(follower: Follower) -> dict[str, Any]:
    """The agent's result: it ran to its end, and each of its windows was pulled exactly once."""
    result = agentctl.result(follower.ex, follower.job)
    assert (result["status"], result["ended"]) == ("ok", "duration"), result
    assert [w["index"] for w in follower.windows()] == list(range(result["windows"]))
    seqs = [e["seq"] for e in follower.events]
    assert seqs == list(range(1, len(seqs) + 1))  # the whole journal, in order, nothing twice
    return result


def test_a_link_cut_past_the_ssh_timeouts_stops_nothing_and_loses_nothing(
    far: FarHost, far_ex: SSHExecutor, engine: subprocess.Popen[str], tmp_path: Path
) -> None:
    down_s = int(DEAD_AFTER_S) + 3
    follower = start(far_ex, soak_spec(engine, tmp_path / "tier", duration_s=down_s + 4), tmp_path)
    follower.until(follower.windows, timeout_s=30)
    far.cut()
    cut_at, cut_unix = time.monotonic(), time.time()
    follower.until(lambda: follower.failed, timeout_s=DEAD_AFTER_S + 15, interval_s=1)
    lost_after = time.monotonic() - cut_at
    time.sleep(max(0.0, down_s - (time.monotonic() - cut_at)))
    far.mend()
    mend_unix = time.time()
    follower.until(lambda: follower.finished, timeout_s=60, interval_s=1)

    result = assert_every_window_once(follower)
    during = [w["index"] for w in follower.windows() if cut_unix <= w["end_unix_s"] <= mend_unix]
    print(
        f"\nlink cut {mend_unix - cut_unix:.1f} s; the poll failed after {lost_after:.1f} s "
        f"({follower.failed[0][:90]}); windows run during the cut {during}; {result['windows']} pulled"
    )
    assert "connection lost" in follower.failed[0] or "cannot connect" in follower.failed[0]
    assert len(during) >= 2  # the soak ran on while nobody could reach its host
    assert all(w["summary"]["failed"] == 0 for w in follower.windows())


IPTABLES = ("ip", "netns", "exec", "{}", "iptables")


def drop(far: FarHost, share: float) -> None:
    """The host's end of the link loses ``share`` of the packets it sends and of those it receives."""
    ns = [a.format(far.netns) for a in IPTABLES]
    rule = ["-m", "statistic", "--mode", "random", "--probability", str(share), "-j", "DROP"]
    subprocess.run([*ns, "-A", "INPUT", "-i", far.far_if, *rule], check=True)
    subprocess.run([*ns, "-A", "OUTPUT", "-o", far.far_if, *rule], check=True)


def test_thirty_percent_packet_loss_hangs_no_poll_and_loses_nothing(
    far: FarHost, far_ex: SSHExecutor, engine: subprocess.Popen[str], tmp_path: Path
) -> None:
    follower = start(far_ex, soak_spec(engine, tmp_path / "tier"), tmp_path)
    drop(far, 0.3)
    follower.until(lambda: follower.finished, timeout_s=120)
    counters = [a.format(far.netns) for a in IPTABLES] + ["-L", "-v", "-n", "-x"]
    listed = subprocess.run(counters, capture_output=True, text=True, check=True).stdout
    dropped = sum(int(line.split()[0]) for line in listed.splitlines() if "DROP" in line.split()[2:3])

    result = assert_every_window_once(follower)
    print(
        f"\n30 % loss: {dropped} packets dropped; {len(follower.poll_s)} polls, "
        f"slowest {max(follower.poll_s):.1f} s, {len(follower.failed)} failed ({follower.failed[:1]}); "
        f"{result['windows']} windows pulled"
    )
    assert dropped > 0
    assert max(follower.poll_s) < agentctl.SHORT_S + DEAD_AFTER_S  # bounded: a poll's own timeout


def test_a_soak_killed_on_its_host_is_detected_within_two_windows(
    far: FarHost, far_ex: SSHExecutor, engine: subprocess.Popen[str], tmp_path: Path
) -> None:
    follower = start(far_ex, soak_spec(engine, tmp_path / "tier", duration_s=60), tmp_path)
    follower.until(follower.windows, timeout_s=30)
    far_ex.run("kill -KILL %s", follower.job.pid, check=True)
    killed_at = time.monotonic()
    with pytest.raises(LabError) as info:
        agentctl.wait(far_ex, follower.job, timeout_s=60, interval_s=WINDOW_S / 2, offset=follower.offset)
    took = time.monotonic() - killed_at

    print(
        f"\nsoak SIGKILLed after {len(follower.windows())} window(s): detected in {took:.1f} s "
        f"({str(info.value).splitlines()[0]})"
    )
    assert f"agent soak (pid {follower.job.pid}) died without an exit code" in str(info.value)
    assert took < 2 * WINDOW_S


@pytest.fixture
def small_disk(far_ex: SSHExecutor, tmp_path: Path) -> Iterator[Path]:
    """A 32 KiB tmpfs on the host (in its sshd's mount namespace): a state directory that fills."""
    path = tmp_path / "small"
    path.mkdir()
    far_ex.run("mount -t tmpfs -o size=32k kvgate-full %s", path, check=True)
    yield path
    far_ex.run("umount -l %s", path, check=True)


def test_a_full_journal_disk_is_a_clear_failure_with_the_journal_intact_up_to_it(
    far_ex: SSHExecutor, engine: subprocess.Popen[str], tmp_path: Path, small_disk: Path
) -> None:
    """Before, the agent died without an exit code and a torn event ended its journal."""
    follower = start(far_ex, soak_spec(engine, tmp_path / "tier", duration_s=60), tmp_path, small_disk)
    started = time.monotonic()
    result = agentctl.wait(far_ex, follower.job, follower.events.append, timeout_s=90, interval_s=0.5)
    took = time.monotonic() - started
    journal = far_ex.run("cat %s/events.jsonl", follower.job.state_dir, check=True).stdout
    lines = journal.splitlines()
    windows = follower.windows()

    print(
        f"\njournal disk full after {took:.1f} s: {len(windows)} windows, {len(journal)} B of journal; "
        f"{result['status']}: {result['error']}"
    )
    assert (result["status"], result["exit_code"]) == ("failed", 1)
    assert "OSError: [Errno 28] No space left on device" in result["error"]
    assert journal.endswith("\n")  # whole events only, in order: intact up to the full disk
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, len(lines) + 1))
    assert follower.events == [json.loads(line) for line in lines]  # and every one of them was pulled
    assert windows
    assert [w["index"] for w in windows] == list(range(len(windows)))
    assert took < 40  # it failed when the disk filled, not at the soak's end
    assert group_pids(engine.pid) == []  # the soak still stopped its engine
