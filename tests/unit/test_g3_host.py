"""G3 host side on this machine: window counters, engine hit parsing, the shipped client, the gate profile."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from kvgate.errors import ConfigError
from kvgate.fio.cold import backing_device
from kvgate.g3 import client, hostio
from kvgate.g3.profile import G3Profile, load_g3_profile
from kvgate.loadgen.record import RequestRecord
from kvgate.transport.local import LocalExecutor


def test_a_snapshot_reads_the_device_the_engine_process_and_the_log_length(tmp_path: Path) -> None:
    ex = LocalExecutor()
    log = tmp_path / "engine.log"
    log.write_text("one\ntwo\n")
    dev = backing_device(ex, str(tmp_path))
    before = hostio.snapshot(ex, dev, os.getpid(), str(log))
    (tmp_path / "data").write_bytes(os.urandom(1 << 20))
    (tmp_path / "data").read_bytes()
    log.write_text("one\ntwo\nthree\n")
    after = hostio.snapshot(ex, dev, os.getpid(), str(log))
    assert (before.log_lines, after.log_lines) == (2, 3)
    assert hostio.log_since(ex, str(log), before.log_lines) == "three\n"
    assert before.engine_read_bytes is not None
    assert (hostio.delta(before.engine_read_bytes, after.engine_read_bytes) or 0) >= 0
    if dev is not None:  # tmpfs has none
        assert before.device_read_bytes is not None
    assert hostio.delta(None, 5) is None


def test_a_process_that_is_gone_has_no_engine_counter(tmp_path: Path) -> None:
    (tmp_path / "log").write_text("")
    snap = hostio.snapshot(LocalExecutor(), None, 999_999_999, str(tmp_path / "log"))
    assert (snap.engine_read_bytes, snap.device_read_bytes, snap.log_lines) == (None, None, 0)


def test_restored_tokens_come_from_the_engines_own_log_lines() -> None:
    hit = (
        "state_read_data: reading state\nLlama._create_completion: cache hit\n"
        "Llama.generate: 2079 prefix-match hit, remaining 1 prompt tokens to eval\n"
    )
    assert hostio.hit_tokens("llama-cpp", hit) == 2079
    wrong_entry = "Llama._create_completion: cache hit\nLlama.generate: 1 prefix-match hit, remaining 1017\n"
    assert hostio.hit_tokens("llama-cpp", wrong_entry) == 1
    assert hostio.hit_tokens("llama-cpp", "Llama._create_completion: cache miss\n") == 0
    assert hostio.hit_tokens("vllm", hit) is None  # unknown: the byte counters decide


def loadgen_document(record: RequestRecord) -> dict[str, Any]:
    return {"records": [record.to_dict()]}


def test_a_loadgen_result_becomes_an_outcome_in_seconds() -> None:
    ok = RequestRecord(0, "u", send_ns=0, chunk_ns=[150_000_000, 200_000_000, 250_000_000], success=True,
                       text="abc", finish_reason="length")  # fmt: skip
    out = client.outcome(loadgen_document(ok))
    assert (out.ttft_s, out.e2e_s, out.text, out.finish_reason, out.output_chunks) == (
        0.15,
        0.25,
        "abc",
        "length",
        3,
    )
    assert out.ok
    failed = client.outcome(loadgen_document(RequestRecord(0, "u", error="HTTP 500: boom")))
    assert not failed.ok
    assert failed.error == "HTTP 500: boom"


def test_the_shipped_client_is_deterministic_and_runs_on_the_host(tmp_path: Path) -> None:
    assert client.zipapp_bytes() == client.zipapp_bytes()
    ex = LocalExecutor()
    remote = client.ensure_client(ex, tmp_path)
    site = client.LoadSite(ex, sys.executable, remote, str(tmp_path))
    site.warm_up()
    assert site.side == "host"
    req = client.Request("http://127.0.0.1:9", "m", "salt", 100, 1.25, 8, 30.0, fixed_output="min_tokens")
    argv = req.argv("/tmp/out.json")
    assert argv[argv.index("--tokens-per-word") + 1] == "1.25"
    assert argv[argv.index("--fixed-output") + 1] == "min_tokens"
    assert argv[argv.index("--output-tokens-from") + 1] == "chunks"


def test_profiles_load_and_a_skip_needs_its_declared_reason(tmp_path: Path) -> None:
    smoke = load_g3_profile("smoke")
    assert smoke.trials >= 3
    assert smoke.verdict("throughput-gain-conc16").reason
    data = smoke.model_dump(mode="json")
    data["verdicts"][2]["reason"] = ""
    with pytest.raises(ValueError, match="declared reason"):
        G3Profile.model_validate(data)
    data["verdicts"][2] = data["verdicts"][0]
    with pytest.raises(ValueError, match="must be unique"):
        G3Profile.model_validate(data)
    with pytest.raises(ConfigError, match="no-such-scale"):
        load_g3_profile("no-such-scale")
