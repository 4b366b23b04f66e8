"""G3 host side on this machine: window counters, engine hit parsing, the shipped client, the gate profile."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

from kvgate.base.errors import ConfigError, LabError
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles.g3 import G3Profile, load_g3_profile
from kvgate.orchestration.g3 import client, hostio
from kvgate.probes.agent import engine_log
from kvgate.probes.evidence.window import Counts
from kvgate.probes.hostevidence import HostEvidence
from kvgate.probes.loadgen.record import RequestRecord
from kvgate.transport.local import LocalExecutor


def test_the_host_evidence_reads_the_volume_the_engine_tree_and_the_log(tmp_path: Path) -> None:
    he = HostEvidence(LocalExecutor())
    log = tmp_path / "engine.log"
    log.write_text("one\ntwo\n")
    volume = he.resolve(str(tmp_path))
    engine = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        before = he.snapshot(volume, engines=((engine.pid, "session"),), count_lines=(str(log),))
        log.write_text("one\ntwo\nthree\n")
        after = he.snapshot(volume, engines=((engine.pid, "session"),), count_lines=(str(log),))
    finally:
        engine.kill()
        engine.wait()
    assert (before["lines"][str(log)], after["lines"][str(log)]) == (2, 3)
    assert hostio.log_since(he.ex, str(log), 2) == "three\n"
    counts = Counts.between(before, after)
    assert counts.engine_read_bytes is not None
    assert counts.engine_read_bytes >= 0
    if volume.carriers:  # tmpfs has none
        assert counts.device_read_bytes is not None


def test_an_engine_that_is_gone_is_a_lab_error_naming_it(tmp_path: Path) -> None:
    he = HostEvidence(LocalExecutor())
    with pytest.raises(LabError, match="engine process 999999999 is gone"):
        he.snapshot(he.resolve(str(tmp_path)), engines=((999_999_999, "session"),))


def test_restored_tokens_come_from_the_engines_own_log_lines() -> None:
    hit = (
        "state_read_data: reading state\nLlama._create_completion: cache hit\n"
        "Llama.generate: 2079 prefix-match hit, remaining 1 prompt tokens to eval\n"
    )
    assert hostio.hit_tokens("llama-cpp", hit) == 2079
    wrong_entry = "Llama._create_completion: cache hit\nLlama.generate: 1 prefix-match hit, remaining 1017\n"
    assert hostio.hit_tokens("llama-cpp", wrong_entry) == 1
    assert hostio.hit_tokens("llama-cpp", "Llama._create_completion: cache miss\n") == 0
    assert hostio.hit_tokens(None, hit) is None  # a profile without hit_log: the byte counters decide
    # every log format a profile may name is one the agent and G3 read
    (named,) = typing.get_args(typing.get_args(EngineProfile.model_fields["hit_log"].annotation)[0])
    assert (named,) == engine_log.FORMATS == tuple(hostio.HIT_PARSERS)


def loadgen_document(record: RequestRecord) -> dict[str, Any]:
    return {"records": [record.to_dict()]}


def test_a_loadgen_result_becomes_an_outcome_in_seconds() -> None:
    ok = RequestRecord(
        0,
        "u",
        send_ns=0,
        chunk_ns=[150_000_000, 200_000_000, 250_000_000],
        success=True,
        text="abc",
        finish_reason="length",
    )
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
    remote = client.ensure_client(ex)
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
