"""A real llama.cpp engine (llama-cpp-python server) on a tiny locally generated model.

Lifecycle: start → ready → completion → stop leaves no process in the group; a bad
flag is an EngineCrashed with the log tail; an engine that never gets ready is an
EngineNotReady within the timeout and is killed. Disk cache: a prompt's KV state
lands on the "candidate" directory and serves the same prompt after a restart and a
dropped page cache.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvgate.configuration.engine_profile import EngineProfile, engine_profile
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.errors import EngineCrashed, EngineNotReady
from kvgate.probes.engines.hostcall import group_members
from kvgate.probes.engines.tinymodel import WORDS, TinyLlamaSpec, ensure_tiny_gguf
from kvgate.transport.local import LocalExecutor

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="engine not installed: run `make engine`",
    ),
]
MODEL_CACHE = Path(os.environ.get("KVGATE_MODEL_CACHE", "/var/tmp/kvgate-models"))


@pytest.fixture(scope="module")
def tiny_model() -> Path:
    """The tiny GGUF, generated once and kept across runs (keyed by its spec digest)."""
    return ensure_tiny_gguf(MODEL_CACHE)


@pytest.fixture
def ex() -> Iterator[LocalExecutor]:
    executor = LocalExecutor()
    yield executor
    executor.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def placement(tmp_path: Path, model: Path) -> Placement:
    return Placement(
        run_dir=str(tmp_path / "run"),
        model=str(model),
        cache_dir=str(tmp_path / "candidate"),
        port=free_port(),
        python=sys.executable,
    )


def profile(name: str, **changes: object) -> EngineProfile:
    return engine_profile(name).model_copy(update=changes)


def pgid_members(pgid: int) -> list[str]:
    """Independent of kvgate: `ps` lists live (non-zombie) processes of the group."""
    out = subprocess.run(["ps", "-eo", "pid=,pgid=,stat="], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.split()[1] == str(pgid) and "Z" not in line.split()[2]]


def completion(prompt: str, max_tokens: int, *, stream: bool = False) -> str:
    return json.dumps({"prompt": prompt, "max_tokens": max_tokens, "temperature": 0.0, "stream": stream})


def test_start_ready_complete_and_stop_leaves_nothing(
    ex: LocalExecutor, tiny_model: Path, tmp_path: Path
) -> None:
    engine = EngineService(ex, profile("llama-cpp-recompute"), placement(tmp_path, tiny_model))
    with engine:
        assert engine.record is not None
        pgid = engine.record.pid
        print(f"\nrestart-to-ready {engine.record.ready_s:.2f} s, version {engine.record.version}")
        assert engine.record.version == "llama-cpp-python 0.3.36"
        assert engine.record.serves_concurrently is False
        assert pgid_members(pgid), "the engine should be running inside the context"
        res = engine.request("POST", "/v1/completions", body=completion("The storage array is fast and", 4))
        assert res.ok, res
        body = res.json()
        assert body["usage"]["prompt_tokens"] >= 7
        assert body["usage"]["completion_tokens"] >= 1
    assert pgid_members(pgid) == []
    assert group_members(ex, sys.executable, pgid) == []


def test_a_bad_flag_is_a_crash_with_the_log_tail(ex: LocalExecutor, tiny_model: Path, tmp_path: Path) -> None:
    bad = profile("llama-cpp-recompute")
    bad = bad.model_copy(update={"launch": [*bad.launch, "--no-such-flag"]})
    start = time.monotonic()
    with pytest.raises(EngineCrashed) as err, EngineService(ex, bad, placement(tmp_path, tiny_model)):
        pytest.fail("a bad flag must not reach the body of the with block")
    assert time.monotonic() - start < 60
    assert "--no-such-flag" in err.value.log_tail
    assert "exited during start-up" in str(err.value)


def test_an_engine_killed_while_serving_is_reported_as_a_crash(
    ex: LocalExecutor, tiny_model: Path, tmp_path: Path
) -> None:
    with EngineService(ex, profile("llama-cpp-recompute"), placement(tmp_path, tiny_model)) as engine:
        assert engine.pid is not None
        os.kill(engine.pid, signal.SIGKILL)
        with pytest.raises(EngineCrashed, match="died") as err:
            engine.request("POST", "/v1/completions", body=completion("After the crash", 2), timeout_s=30)
        assert "GET /v1/models" in err.value.log_tail  # the ready probe, last thing the engine logged


def test_an_engine_that_never_gets_ready_times_out_and_is_killed(ex: LocalExecutor, tmp_path: Path) -> None:
    sleeper = profile("llama-cpp-recompute", launch=["sleep", "600"], version_cmd=[], ready_timeout_s=3.0)
    where = placement(tmp_path, Path("/nonexistent.gguf"))
    start = time.monotonic()
    with pytest.raises(EngineNotReady, match="not ready after 3 s"), EngineService(ex, sleeper, where):
        pytest.fail("never ready")
    assert time.monotonic() - start < 3.0 + 20
    pgid = int(Path(where.run_dir, "engine.pid").read_text())
    assert pgid_members(pgid) == []


def long_prompt(n_words: int, salt: str) -> str:
    rng = random.Random(salt)
    return f"Run {salt}. " + " ".join(rng.choice(WORDS) for _ in range(n_words))


def engine_read_bytes(ex: LocalExecutor, pid: int) -> int:
    io = ex.run("cat /proc/%s/io", pid, check=True).stdout
    return int(next(line.split()[1] for line in io.splitlines() if line.startswith("read_bytes:")))


def test_disk_cache_restores_a_prompt_after_restart_and_dropped_page_cache(
    ex: LocalExecutor, tiny_model: Path, tmp_path: Path
) -> None:
    prompt = long_prompt(900, salt=tmp_path.name)
    body = completion(prompt, 1, stream=True)
    engine = EngineService(ex, profile("llama-cpp-disk"), placement(tmp_path, tiny_model))
    with engine:
        n_tokens = len(
            engine.request("POST", "/extras/tokenize", body=json.dumps({"input": prompt})).json()["tokens"]
        )
        empty = engine.kv_dir_bytes()
        first = engine.request("POST", "/v1/completions", body=body, stream=True, timeout_s=300)
        assert first.ok, first
        assert first.first_chunk_s is not None
        grown = engine.kv_dir_bytes() - empty
        restart_s = engine.restart()
        ex.run("sync; echo 3 > /proc/sys/vm/drop_caches", sudo=os.geteuid() != 0, check=True)
        assert engine.pid is not None
        read_before = engine_read_bytes(ex, engine.pid)
        second = engine.request("POST", "/v1/completions", body=body, stream=True, timeout_s=300)
        read_bytes = engine_read_bytes(ex, engine.pid) - read_before
        log = engine.read_log()
    predicted = n_tokens * TinyLlamaSpec().llama_cpp_state_bytes_per_token  # KV + one logits row per token
    print(
        f"\nprompt {n_tokens} tokens; cache dir grew {grown / 2**20:.1f} MiB "
        f"(predicted {predicted / 2**20:.1f} MiB); restart-to-ready {restart_s:.2f} s\n"
        f"TTFT recompute {first.first_chunk_s:.2f} s, restored {second.first_chunk_s:.2f} s; "
        f"engine read {read_bytes / 2**20:.1f} MiB from storage during the restore"
    )
    assert second.ok, second
    assert second.first_chunk_s is not None
    assert 0.9 * predicted <= grown <= 1.25 * predicted, "the saved state should be the prompt's KV + logits"
    assert "cache hit" in log.lower()
    assert read_bytes >= 0.9 * predicted, (
        "the restore must read the KV state from the disk, not the page cache"
    )
    assert second.first_chunk_s < first.first_chunk_s
