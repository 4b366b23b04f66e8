"""The agent end to end through LocalExecutor: upload by hash, detached start, polling, result, cancel.

The same calls run over SSH in the SSH variant; here the "host" is this machine
with its own $HOME, so the upload cache starts empty.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from kvgate.base.errors import LabError
from kvgate.configuration.inventory.schema import Volume
from kvgate.probes import agentctl
from kvgate.probes.scratch import ScratchDir, checked
from kvgate.transport.base import CommandResult
from kvgate.transport.local import LocalExecutor

MIB = 1 << 20
DROP_ALLOWED = os.access("/proc/sys/vm/drop_caches", os.W_OK)


class HomeExecutor(LocalExecutor):
    """A local host whose $HOME is a test directory; counts uploads."""

    def __init__(self, home: Path) -> None:
        super().__init__("local-test")
        self.home = home
        self.puts = 0

    def run(self, command: str, *args: object, **kw: Any) -> CommandResult:
        return super().run("HOME=%s; export HOME; " + command, self.home, *args, **kw)

    def put(self, local: Path, remote: str) -> None:
        self.puts += 1
        super().put(local, remote)


@pytest.fixture
def ex(tmp_path: Path) -> HomeExecutor:
    (tmp_path / "home").mkdir()
    return HomeExecutor(tmp_path / "home")


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "scratch").mkdir()
    return tmp_path / "scratch"


def target(ex: LocalExecutor, spec: dict[str, Any]) -> ScratchDir:
    """The spec's target_dir through the scratch check, its parent directory the scratch volume."""
    path = Path(spec["target_dir"])
    return checked(ex, Volume(path=str(path.parent), kind="candidate", scratch=True), str(path))


def run_job(
    ex: HomeExecutor, workload: str, spec: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    job = agentctl.start(ex, workload, spec, target=target(ex, spec))
    result = agentctl.wait(ex, job, seen.append, timeout_s=120, interval_s=0.1)
    return result, seen


def assert_cold_proven(cold: dict[str, Any]) -> None:
    assert cold["expected_read_bytes"] > 0
    if DROP_ALLOWED and cold["volume"]["carriers"]:
        assert cold["drop_caches"]["done"] is True
        assert cold["counts"]["device_read_bytes"] > 0


def assert_direct_reported(part: dict[str, Any]) -> None:
    assert part["direct_requested"] is True
    assert part["direct_engaged"] or part["direct_fallback_reason"]  # a fallback is never silent


def test_upload_is_cached_by_content_hash(ex: HomeExecutor) -> None:
    first = agentctl.ensure_uploaded(ex)
    assert ex.puts == 1
    assert first.startswith(str(ex.home / ".cache/kvgate/agent-"))
    assert agentctl.ensure_uploaded(ex) == first
    assert ex.puts == 1
    Path(first).write_bytes(b"stale")  # a damaged cache entry is replaced
    assert agentctl.ensure_uploaded(ex) == first
    assert ex.puts == 2
    assert Path(first).read_bytes() == agentctl.zipapp_bytes()


def test_kv_restore_runs_detached_verifies_and_proves_cold(ex: HomeExecutor, scratch: Path) -> None:
    spec = {"target_dir": str(scratch), "kv_bytes_per_token": 16384, "prefix_tokens": 1024, "requests": 4}
    spec.update({"readers_per_request": [1, 2], "io_bytes": 2 * MIB, "labels": {"profile": "test"}})
    result, seen = run_job(ex, "kv-restore", spec)
    assert result["status"] == "ok", result
    assert result["exit_code"] == 0
    assert result["labels"] == {"profile": "test"}
    assert seen[0]["event"] == "start"
    assert seen[-1]["event"] == "result"
    assert {e["phase"] for e in seen if e["event"] == "progress"} == {"write", "restore"}
    total = 4 * 1024 * 16384
    assert result["layout"]["chunk_bytes"] == 4 * MIB
    assert result["write"]["bytes"] == total
    for restore in result["restores"]:
        assert restore["restored_bytes"] == total
        assert restore["verify_ok"]
        assert restore["checksums_verified"] == 4 * 4 * 2
        assert len(restore["request_latencies_s"]) == 4
        assert restore["restore_latency_p50_s"] <= restore["restore_latency_p99_s"]
        assert_cold_proven(restore["cold"])
        assert_direct_reported(restore)
    assert [r["readers_per_request"] for r in result["restores"]] == [1, 2]
    assert result["parallel_vs_serial_bandwidth_ratio"] > 0
    assert list(scratch.iterdir()) == []  # the run directory was removed


def test_model_load_generates_safetensors_and_verifies_every_loader(ex: HomeExecutor, scratch: Path) -> None:
    spec = {"target_dir": str(scratch), "model_bytes": 32 * MIB, "shards": 3, "hidden_size": 256}
    spec.update({"intermediate_size": 768, "kv_dim": 64, "threads": 2, "io_bytes": 2 * MIB})
    result, _ = run_job(ex, "model-load", spec)
    assert result["status"] == "ok", result
    assert len(result["generate"]["files"]) == 3
    assert result["generate"]["tensors"] > 3
    loads = {load["loader"]: load for load in result["loads"]}
    assert set(loads) == {"sequential", "parallel", "safetensors"}
    for name in ("sequential", "parallel"):
        assert loads[name]["status"] == "ok", loads[name]
        assert loads[name]["verify_ok"]
        assert loads[name]["read_bytes"] == result["generate"]["model_bytes"]
        assert_cold_proven(loads[name]["cold"])
    assert_direct_reported(loads["parallel"])
    library = loads["safetensors"]
    assert (library["status"] == "ok" and library["verify_ok"]) or "not importable" in library["reason"]


def test_checkpoint_ranks_write_then_read_back_cold(ex: HomeExecutor, scratch: Path) -> None:
    spec = {"target_dir": str(scratch), "snapshot_bytes": 48 * MIB, "ranks": 3, "io_bytes": 4 * MIB}
    spec["readback_threads"] = 2
    result, seen = run_job(ex, "checkpoint", spec)
    assert result["status"] == "ok", result
    write, readback = result["write"], result["readback"]
    assert write["bytes"] == 48 * MIB
    assert len(write["ranks"]) == 3
    assert all(rank["fsync_s"] >= 0 and rank["bytes"] == 16 * MIB for rank in write["ranks"])
    assert readback["verify_ok"]
    assert readback["checksums_verified"] == 12
    assert_cold_proven(readback["cold"])
    assert {e["phase"] for e in seen if e["event"] == "progress"} == {"write", "readback"}


def test_a_bad_target_is_refused_and_nothing_is_created(ex: HomeExecutor, tmp_path: Path) -> None:
    missing = tmp_path / "not-there"
    result, _ = run_job(ex, "checkpoint", {"target_dir": str(missing), "snapshot_bytes": MIB, "ranks": 1})
    assert result["status"] == "invalid-spec"
    assert result["exit_code"] == 2
    assert "target_dir" in result["error"]
    assert not missing.exists()


def long_job(ex: HomeExecutor, scratch: Path) -> agentctl.RemoteJob:
    spec = {"target_dir": str(scratch), "kv_bytes_per_token": 16384, "prefix_tokens": 2048, "requests": 2}
    spec |= {"readers_per_request": [1] * 200, "io_bytes": MIB}
    return agentctl.start(ex, "kv-restore", spec, target=target(ex, spec))


def test_poll_reads_events_incrementally_until_finished(ex: HomeExecutor, scratch: Path) -> None:
    spec = {"target_dir": str(scratch), "kv_bytes_per_token": 16384, "prefix_tokens": 512, "requests": 2}
    spec |= {"readers_per_request": [1, 1, 1], "io_bytes": MIB}
    job = agentctl.start(ex, "kv-restore", spec, target=target(ex, spec))
    offset, collected, finished, polls = 0, [], False, 0
    while not finished and polls < 600:
        events, offset, finished = agentctl.poll(ex, job, offset)
        collected += events
        polls += 1
        time.sleep(0.05)
    assert finished
    on_disk = (Path(job.state_dir) / "events.jsonl").read_bytes()
    assert offset == len(on_disk)
    assert collected == [json.loads(line) for line in on_disk.splitlines()]
    assert [e["seq"] for e in collected] == list(range(1, len(collected) + 1))
    assert agentctl.poll(ex, job, offset) == ([], offset, True)
    assert agentctl.result(ex, job)["run_dir"].endswith(f"kvgate-kv-restore-{job.run_id}")


def test_cancel_kills_the_detached_process_and_cleans_up(ex: HomeExecutor, scratch: Path) -> None:
    job = long_job(ex, scratch)
    deadline = time.monotonic() + 20
    offset = 0
    while time.monotonic() < deadline:
        events, offset, _ = agentctl.poll(ex, job, offset)
        if any(e.get("phase") == "restore" for e in events):
            break
        time.sleep(0.05)
    assert agentctl.cancel(ex, job) is True
    assert not agentctl._alive(ex, job)
    result = agentctl.result(ex, job)
    assert result["status"] == "cancelled"
    assert result["exit_code"] == 143
    assert list(scratch.iterdir()) == []
    assert agentctl.cancel(ex, job) is False  # gone: nothing is signalled twice


def test_an_agent_killed_without_an_exit_code_is_reported_dead(ex: HomeExecutor, scratch: Path) -> None:
    job = long_job(ex, scratch)
    os.killpg(job.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while agentctl._alive(ex, job) and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(LabError, match="died without an exit code"):
        agentctl.poll(ex, job, 0)
    with pytest.raises(LabError, match="died without an exit code: it was killed"):
        agentctl.wait(ex, job, timeout_s=5)
