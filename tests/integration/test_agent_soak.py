"""The agent's soak workload, detached through agentctl, against a real streaming server.

The "engine" is kvgate's null OpenAI server in its own process group (as engines are
started), so the soak's windows, canary, process-group sampling and its stopping of the
engines at the end are all real; only the model is missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from nullserver import SERVE
from ports import free_port_pair
from sshd import HostFactory, SSHServer

from kvgate.base.errors import TransportError
from kvgate.probes import agentctl
from kvgate.probes.agent.soak_sample import group_pids
from kvgate.transport.local import LocalExecutor
from kvgate.transport.ssh import SSHExecutor

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def engine(tmp_path: Path) -> Any:
    """A null server as the engine: its own session and process group, a URL."""
    port = free_port_pair()
    argv = [
        *SERVE,
        "--port",
        str(port),
        "--first-token-delay-ms",
        "5",
        "--token-delay-ms",
        "1",
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, start_new_session=True, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("listening")
    yield proc, f"http://127.0.0.1:{port}"
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()


def spec(url: str, pgid: int, cache_dir: Path, **over: Any) -> dict[str, Any]:
    return {
        "urls": [url],
        "model": "null",
        "duration_s": 6,
        "window_s": 2,
        "min_windows": 3,  # a busy machine's windows overrun: three, however long each takes
        "concurrency": 4,
        "prompt_tokens": 64,
        "max_tokens": 8,
        "canary_prompts": 2,
        "canary_max_tokens": 4,
        "logprobs": 3,
        "salt": "soak-test",
        "volume": None,
        "engines": [{"pgid": pgid, "cache_dir": str(cache_dir), "metrics_url": None, "hit_counter": None}],
    } | over


def soak(tmp_path: Path, data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    ex = LocalExecutor()
    job = agentctl.start(ex, "soak", data, state_root=str(tmp_path / "jobs"))
    result = agentctl.wait(ex, job, seen.append, timeout_s=60, interval_s=0.2)
    return result, [e for e in seen if e["event"] == "window"]


def test_windows_of_mixed_load_a_steady_canary_and_the_engine_stopped_at_the_end(
    tmp_path: Path, engine: Any
) -> None:
    proc, url = engine
    (tmp_path / "tier").mkdir()
    (tmp_path / "tier" / "chunk.bin").write_bytes(b"x" * 4096)
    result, windows = soak(tmp_path, spec(url, proc.pid, tmp_path / "tier"))

    assert (result["status"], result["ended"], result["windows"]) == ("ok", "duration", 3)
    assert [w["index"] for w in windows] == [0, 1, 2]
    for w in windows:
        assert w["summary"]["completed"] == w["requests"] > 0
        assert (w["summary"]["failed"], w["empty_responses"]) == (0, 0)
        assert 0 < w["reuse_requests"] < w["requests"]  # both kinds of request, every window
        assert w["rss_kib"] > 0
        assert (w["processes"], w["engines_alive"]) == (1, 1)
        assert w["cache_dir_bytes"] == 4096
        assert w["engine_read_bytes"] >= 0  # its session's storage reads, beside the device's
        assert [c["text"] for c in w["canary"]] == [c["text"] for c in windows[0]["canary"]]
        assert len(w["canary"][0]["logprobs"]) == 4  # top-k with every canary token
    assert windows[1]["start_unix_s"] >= windows[0]["end_unix_s"] - 0.01  # windows follow each other
    assert result["engines_left"] == []
    assert proc.wait(timeout=10) is not None  # the soak stopped the engine's process group itself


def test_a_soak_runs_the_windows_its_trends_need_even_past_its_duration(tmp_path: Path, engine: Any) -> None:
    """Before, a soak whose windows overran (a busy host) ended with too few to judge its trends."""
    proc, url = engine
    result, windows = soak(tmp_path, spec(url, proc.pid, tmp_path, duration_s=1, window_s=1, min_windows=3))
    assert (result["status"], result["ended"], result["windows"]) == ("ok", "duration", 3)
    assert [w["index"] for w in windows] == [0, 1, 2]


def test_an_engine_that_dies_ends_the_soak_and_says_so(tmp_path: Path, engine: Any) -> None:
    proc, url = engine
    data = spec(url, proc.pid, tmp_path, duration_s=30)
    ex = LocalExecutor()
    job = agentctl.start(ex, "soak", data, state_root=str(tmp_path / "jobs"))
    time.sleep(2.5)
    os.killpg(proc.pid, signal.SIGKILL)
    seen: list[dict[str, Any]] = []
    result = agentctl.wait(ex, job, seen.append, timeout_s=60, interval_s=0.2)
    windows = [e for e in seen if e["event"] == "window"]

    assert (result["status"], result["ended"]) == ("ok", "engine-died")
    assert windows[-1]["engines_alive"] == 0
    assert windows[-1]["summary"]["failed"] > 0  # the requests after the death failed, and count
    assert result["soak_s"] < 15  # it did not run on against a dead engine
    assert group_pids(proc.pid) == []


def test_a_bad_spec_is_refused_naming_the_key(tmp_path: Path, engine: Any) -> None:
    proc, url = engine
    result, _ = soak(tmp_path, spec(url, proc.pid, tmp_path, reuse=1.5))
    assert result["status"] == "invalid-spec"
    assert "reuse: expected a number within [0.0, 1.0], got 1.5" in result["error"]
    assert proc.poll() is None  # a refused spec touches no engine


def test_polls_that_fail_on_a_dropped_link_are_retried_and_no_window_is_lost(
    tmp_path: Path, engine: Any, sshd_pair: tuple[SSHServer, SSHServer], ssh_host: HostFactory
) -> None:
    proc, url = engine
    server = sshd_pair[0]
    seen: list[dict[str, Any]] = []
    with SSHExecutor("node-a", ssh_host(server)) as ex:
        job = agentctl.start(
            ex,
            "soak",
            spec(url, proc.pid, tmp_path / "tier", duration_s=8),
            state_root=str(tmp_path / "jobs"),
        )
        server.kill()  # every SSH connection drops; the soak on the host runs on
        with pytest.raises(TransportError):
            agentctl.wait(ex, job, seen.append, timeout_s=60)  # no tolerance: the first failed poll raises
        restart = threading.Timer(6.0, server.restart)
        restart.start()
        result = agentctl.wait(ex, job, seen.append, timeout_s=60, interval_s=0.5, tolerate_s=45)
        restart.join()
    windows = [e["index"] for e in seen if e["event"] == "window"]
    assert (result["status"], result["ended"]) == ("ok", "duration")
    assert windows == list(range(result["windows"]))  # each once, none lost while the link was down
