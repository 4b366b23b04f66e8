"""A site adds an engine of a family kvgate has never seen with one YAML file and no code (issue 24).

The family here is the null server (tests/nullserver.py): its profile says what kvgate needs to know
of it — the package the host imports, its tokenizer endpoint, that it counts no cache hit anywhere
and serves no tiny model — and kvgate starts it, checks it, sizes prompts with it and plans around
what it cannot show, each from the profile.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import yaml

from kvgate.configuration.engine_profile import load_profile
from kvgate.configuration.inventory import EngineDeployment
from kvgate.orchestration.g4.plan import skip_reason
from kvgate.orchestration.plan.inputs import state_bytes_per_token
from kvgate.probes.engines import EngineService, Placement
from kvgate.probes.engines.model_staging import check_engine_installed, describe_model
from kvgate.transport.local import LocalExecutor

NULL_SERVER = Path(__file__).parents[1] / "nullserver.py"
PROFILE = {
    "name": "null-engine",
    "kind": "null",  # no engine kvgate knows by name
    "package": "asyncio",  # what the host must import: the null server is stdlib
    "tokenize": {"path": "/tokenize", "field": "prompt"},
    "description": "tests/nullserver.py: streams max_tokens tokens, counts a prompt's words",
    "launch": ["{python}", str(NULL_SERVER), "--host", "{host}", "--port", "{port}"],
    "ready": {"path": "/v1/models"},
    "metrics": {"path": "/metrics"},
    "serves_concurrently": True,
    "ready_timeout_s": 60,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_engine_of_a_new_family_is_one_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "null-engine.yaml"
    path.write_text(yaml.safe_dump(PROFILE))
    profile = load_profile(path)
    ex = LocalExecutor()
    check_engine_installed(ex, sys.executable, profile)  # imports its package on the host
    run, kv = str(tmp_path / "run"), str(tmp_path / "kv")
    where = Placement(run, "null-model", kv, port=free_port(), python=sys.executable)
    with EngineService(ex, profile, where) as engine:
        assert engine.count_tokens(profile.tokenize.path, profile.tokenize.field, "four words of prompt") == 4
        body = json.dumps({"model": "null-model", "prompt": "a b", "max_tokens": 3, "stream": True})
        assert engine.request("POST", "/v1/completions", body=body).ok
    # what it cannot show is planned from the profile, with its reason
    assert "names no log that says its hits (hit_log)" in str(skip_reason("hit-retention", profile))
    assert "no external KV tier" in str(skip_reason("cache-capacity", profile))
    tiny = EngineDeployment.model_validate(
        {"tier_profile": "null-engine", "recompute_profile": "x", "volume": "v"}
    )
    assert "null-engine serves no tiny model (tiny_model)" in state_bytes_per_token(tiny, profile).source
    assert describe_model(tiny, profile) == ""
