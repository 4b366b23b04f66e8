"""Secrets in an engine profile's data reach neither run.json nor the engine log a run keeps.

A real engine process (a small HTTP server the profile ships as a file) is started by
EngineService and logs its arguments, its config file and each secret bare. Before, a
secret-named key in a profile's YAML data (``remote_auth_token:``) and a JSON launch argument
(``"api_key": …``) were stored in clear in run.json's engine record and in the engine-log
artifact; now the key rule masks them in YAML, JSON and repr text, and their values, known
from the profile's data, are masked wherever they appear later.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path

from ports import free_port_pair

from kvgate.base import redact
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.probes.engines import EngineService, Placement
from kvgate.record.store import RunStore
from kvgate.transport.local import LocalExecutor

ENGINE = """\
import http.server, json, sys
print("argv", sys.argv, flush=True)
print(open("auth.yaml").read(), flush=True)
print("key", json.loads(sys.argv[2])["kv"]["api_key"], flush=True)
print("token", open("auth.yaml").read().split()[-1], flush=True)

class Ready(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ready).serve_forever()
"""


def profile(token: str, key: str) -> EngineProfile:
    return EngineProfile.model_validate(
        {
            "name": "printer",
            "kind": "vllm",
            "package": "json",
            "tokenize": {"path": "/tokenize"},
            "description": "prints what it was given",
            "launch": ["{python}", "{run_dir}/engine.py", "{port}", {"json": {"kv": {"api_key": key}}}],
            "files": {
                "engine.py": {"format": "text", "text": ENGINE},
                "auth.yaml": {"format": "yaml", "data": {"remote": {"remote_auth_token": token}}},
            },
            "ready": {"path": "/"},
            "serves_concurrently": False,
            "ready_timeout_s": 60,
        }
    )


def test_a_profiles_secret_data_reaches_neither_run_json_nor_the_engine_log(tmp_path: Path) -> None:
    token, key = "tok" + secrets.token_hex(8), "key" + secrets.token_hex(8)  # no known shape
    where = Placement(
        run_dir=str(tmp_path / "run"),
        model="/m",
        cache_dir=str(tmp_path / "c"),
        port=free_port_pair(1),
        python=sys.executable,
    )
    ex = LocalExecutor()
    with EngineService(ex, profile(token, key), where) as eng:
        assert eng.record is not None
        log = ex.run("cat %s", eng.log_path, timeout_s=30, check=True).stdout
        record = eng.record.model_dump()
    ex.close()
    assert token in log
    assert key in log
    store = RunStore.create(tmp_path / "r", site="s", gate="g3", meta={"argv": ["kvgate"]})
    store.merge_meta(engines={"h/d": {"ssd-restore": record}})
    store.artifact("h", "g3/d/ssd-restore.engine-log.txt", log)
    store.finish("complete")

    files = [p for p in store.path.rglob("*") if p.is_file()]
    for secret in (token, key):
        assert [p.name for p in files if secret.encode() in p.read_bytes()] == [], secret
    stored = (store.path / "artifacts/h/g3/d/ssd-restore.engine-log.txt").read_text()
    assert f"remote_auth_token: {redact.MASK}" in stored
    assert f"key {redact.MASK}" in stored
    assert f"token {redact.MASK}" in stored
