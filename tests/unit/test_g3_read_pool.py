"""R1 only where the installed LMCache can read a request's disk chunks in parallel.

Before, G3 ran R1's serial and parallel readers whatever LMCache was installed: on a build without the
parallel disk-read pool (LocalDiskBackend._read_thread_pool, LMCache PR #3961) both read serially and R1
FAILed, saying nothing about storage. Now preflight probes the parallel reader's LMCache
(engine[x].read-pool), and G3 leaves the readers unrun and R1 INVALID with that reason.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kvgate.configuration.engine_profile import engine_profile
from kvgate.configuration.gate_profiles import READ_ARMS
from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.g3.measure import DeploymentResult, StoreSink, _conclude
from kvgate.orchestration.g3.protocol import ArmsResult
from kvgate.orchestration.preflight import plan
from kvgate.probes.engines import read_pool_missing, reads_in_parallel
from kvgate.record import RunStore
from kvgate.transport.local import LocalExecutor

LAB = Path(__file__).resolve().parents[2] / "inventory" / "example-lab.yaml"
LOCAL = Path(__file__).resolve().parents[2] / "inventory" / "local.yaml"


def test_preflight_probes_the_lmcache_of_r1s_parallel_reader_where_a_deployment_names_one() -> None:
    lab = {(c.host, c.check): c for c in plan(load_config(LAB))}
    probe = lab[("gpu-1", "engine[r2r3-480b].read-pool")]
    assert probe.ruled is None
    assert probe.criterion.rule == "PF-ENG-5"
    local = [c for c in plan(load_config(LOCAL)) if c.check.endswith(".read-pool")]
    assert local
    assert all(c.ruled is not None for c in local)


def test_an_interpreter_without_lmcache_is_said_so_and_a_serial_reader_needs_no_pool() -> None:
    parallel, serial = (
        engine_profile("vllm-lmcache-parallel-read"),
        engine_profile("vllm-lmcache-serial-read"),
    )
    assert (reads_in_parallel(parallel), reads_in_parallel(serial)) == (True, False)
    ex = LocalExecutor()  # this interpreter has no LMCache: a real import, failing as it would on a lab host
    why = read_pool_missing(ex, sys.executable, parallel)
    assert read_pool_missing(ex, "/nonexistent/python", serial) is None  # nothing to probe: nothing run
    ex.close()
    assert why is not None
    assert why.startswith(f"vllm-lmcache-parallel-read: LMCache cannot be inspected with {sys.executable}")
    assert "ModuleNotFoundError" in why


def test_r1_is_invalid_with_the_reason_when_the_readers_were_not_run(tmp_path: Path) -> None:
    config = load_config(LAB)
    result = DeploymentResult(host="gpu-1", deployment="r2r3-480b", tier=engine_profile("vllm-lmcache"))
    sink = StoreSink(RunStore(tmp_path), result, print)
    why = "vllm-lmcache-parallel-read: the installed LMCache 0.3.5 has no parallel disk-read pool"
    _conclude(result, ArmsResult(read_unmeasurable=why), config, sink)
    r1 = [b.check for b in config.g3.verdicts if (b.baseline_arm, b.candidate_arm) == READ_ARMS]
    assert r1, "the full gate profile binds R1"
    for key, m in result.measurements.items():
        if key.split("@")[0] in r1:
            assert (m.value, m.invalid_reason) == (None, why), key
    assert any(key.split("@")[0] in r1 for key in result.measurements)
