"""An engine runs with the environment kvgate builds, not the login shell's.

Before, the launch was ``env -- K=V … argv``: every ``VLLM_*``, ``LMCACHE_*``, ``SGLANG_*`` and
``*_VISIBLE_DEVICES`` the host's shell exported reached the engine, so a stray ``LMCACHE_*`` would
override the config file kvgate wrote and recorded. Now the launch unsets them and says which.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kvgate.configuration.engine_profile import EngineProfile
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.environment import strays
from kvgate.probes.engines.errors import EngineCrashed
from kvgate.transport.local import LocalExecutor

DUMP = "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))"


def dumping_engine(tmp_path: Path) -> EngineService:
    """An "engine" that writes the environment it got to env.json and exits."""
    data = {
        "name": "env-dump",
        "kind": "vllm",
        "package": "json",
        "tokenize": {"path": "/tokenize"},
        "description": "writes its environment and exits",
        "launch": ["{python}", "-c", DUMP, "{run_dir}/env.json"],
        "env": {"LMCACHE_CONFIG_FILE": "{run_dir}/lmcache.yaml"},
        "ready": {"path": "/"},
        "serves_concurrently": False,
        "ready_timeout_s": 20,
    }
    where = Placement(run_dir=str(tmp_path / "run"), model="/m", cache_dir=str(tmp_path / "c"))
    where = Placement(**{**where.__dict__, "python": sys.executable})
    profile = EngineProfile.model_validate(data)
    return EngineService(LocalExecutor(), profile, where, env={"CUDA_VISIBLE_DEVICES": "0,1"})


def test_the_login_shells_engine_variables_do_not_reach_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in [("VLLM_ATTENTION_BACKEND", "X"), ("LMCACHE_CHUNK_SIZE", "16")]:
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LMCACHE_CONFIG_FILE", "/elsewhere.yaml")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "3")
    eng = dumping_engine(tmp_path)
    with pytest.raises(EngineCrashed):  # it exits at once: its environment is all the test needs
        eng.start()
    eng.ex.close()
    got = json.loads((tmp_path / "run" / "env.json").read_text())
    assert not {"VLLM_ATTENTION_BACKEND", "LMCACHE_CHUNK_SIZE", "HIP_VISIBLE_DEVICES"} & set(got)
    assert got["LMCACHE_CONFIG_FILE"] == f"{tmp_path}/run/lmcache.yaml", "the profile's value wins"
    assert got["CUDA_VISIBLE_DEVICES"] == "0,1", "the placement's value wins"
    assert "PATH" in got, "the rest of the environment is kept"
    assert eng.env_dropped == ["HIP_VISIBLE_DEVICES", "LMCACHE_CHUNK_SIZE", "VLLM_ATTENTION_BACKEND"]


def test_only_engine_variables_kvgate_did_not_declare_are_strays() -> None:
    names = ["PATH", "VLLM_USE_V1", "SGLANG_X", "ROCR_VISIBLE_DEVICES", "MY_VLLM_X", "CUDA_HOME"]
    assert strays(names, {"SGLANG_X": "1"}) == ["ROCR_VISIBLE_DEVICES", "VLLM_USE_V1"]
