"""Secrets are redacted wherever a command line or an environment is recorded (kvgate.base.redact)."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvgate.base import redact
from kvgate.base.criteria import Verdict
from kvgate.configuration.engine_profile import PROFILE_DIR, load_profile
from kvgate.probes.engines import EngineService, Placement
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore
from kvgate.report import render
from kvgate.transport.local import LocalExecutor

MASK = redact.MASK


@pytest.mark.parametrize(
    "name",
    [
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "OPENAI_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "smtp_passwd",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "VLLM_API_KEY",
        "--api-key",
        "--hf_token",
        "--token",
    ],
)
def test_secret_names(name: str) -> None:
    assert redact.secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "PYTHONHASHSEED",
        "CUDA_VISIBLE_DEVICES",
        "LMCACHE_CONFIG_FILE",
        "MAX_TOKENS",
        "--max-num-batched-tokens",
        "KV_BYTES_PER_TOKEN",
        "--tokenizer",
        "--kv-transfer-config",
        "--ssl-keyfile",
        "KEYBOARD",
    ],
)
def test_ordinary_names(name: str) -> None:
    assert not redact.secret_name(name)


def test_every_option_form_loses_its_value_and_nothing_else() -> None:
    argv = ["serve", "--api-key", "abc", "--api-key=def", "--hf-token", "ghi", "--port", "8000", "--api-key"]
    masked = [
        "serve",
        "--api-key",
        MASK,
        f"--api-key={MASK}",
        "--hf-token",
        MASK,
        "--port",
        "8000",
        "--api-key",
    ]
    assert redact.argv(argv) == masked


@pytest.mark.parametrize(
    "secret",
    ["hf_" + "a1" * 17, "sk-proj-" + "Z9" * 12, "ghp_" + "b2" * 18, "AKIA" + "ABCDEFGHIJKLMNOP"],
)
def test_known_shapes_are_masked_in_any_text(secret: str) -> None:
    assert redact.text(f"login with {secret}, then go") == f"login with {MASK}, then go"


def test_assignments_bearer_tokens_and_url_credentials_in_text() -> None:
    line = (
        "HF_TOKEN=abc PORT=1 curl -H 'Authorization: Bearer abcdef123' https://me:pw@hub/x --password=hunter2"
    )
    assert redact.text(line) == (
        f"HF_TOKEN={MASK} PORT=1 curl -H 'Authorization: Bearer {MASK}' "
        f"https://me:{MASK}@hub/x --password={MASK}"
    )


def test_remembered_values_are_masked_in_later_text() -> None:
    value = "site-" + secrets.token_hex(6)  # no known shape: only its name made it a secret
    redact.remember(
        redact.secrets_in({"SITE_API_KEY": value, "PORT": "8000"}, ["x", "--token", "tok-123456"])
    )
    assert redact.text(f"engine started with {value} and tok-123456 on 8000") == (
        f"engine started with {MASK} and {MASK} on 8000"
    )


def test_nothing_a_run_stores_keeps_a_planted_secret(tmp_path: Path) -> None:
    """The engine's record, an engine log quoting its arguments, a failed command line, argv, the report."""
    token, key, password = "hf_" + secrets.token_hex(17), "k" + secrets.token_hex(8), secrets.token_hex(8)
    profile = load_profile(PROFILE_DIR / "vllm-lmcache.yaml").model_copy(update={"version_cmd": []})
    where = Placement(run_dir="/r", model="/m", cache_dir="/c")
    env = {"HF_TOKEN": token, "DB_PASSWORD": password}
    eng = EngineService(LocalExecutor(), profile, where, env=env, args=("--api-key", key))
    record = eng._make_record(pid=1, started_at="now", ready_s=1.0)
    assert (record.env["HF_TOKEN"], record.argv[-2:]) == (MASK, ["--api-key", MASK])

    store = RunStore.create(
        tmp_path, site="s", gate="g3", meta={"argv": ["kvgate", "run", "g3", "--api-key", key]}
    )
    store.merge_meta(engines={"h/d": {"ssd-restore": record.model_dump()}})
    store.artifact("h", "g3/d/engine.log", f"non-default args: {{'api_key': '{key}', 'model': '/m'}}\n")
    store.artifact("h", "g3/d/raw.bin", token.encode() + b"\xff\xfe")
    store.save_facts("h", {"env": f"DB_PASSWORD={password}"})
    failed = f"h: `env DB_PASSWORD={password} python -m vllm serve --api-key {key}` exited 1"
    store.record(JudgementRecord(id="h/x", host="h", check="x", verdict=Verdict.ERROR, condition=failed))
    store.finish("complete")
    render(store.path, pdf=False)

    files = [p for p in store.path.rglob("*") if p.is_file()]
    assert len(files) >= 7
    for secret in (token, key, password):
        assert [p.name for p in files if secret.encode() in p.read_bytes()] == [], secret
    assert (store.path / "artifacts/h/g3/d/raw.bin").read_bytes() == MASK.encode() + b"\xff\xfe"


def test_secret_named_keys_lose_their_values_in_yaml_json_and_repr_text() -> None:
    text = 'remote_auth_token: abc\n{"api_key": "x y", "max_tokens": 5} {\'hf_token\': \'q\'} time: 12:30'
    assert redact.text(text) == (
        f'remote_auth_token: {MASK}\n{{"api_key": "{MASK}", "max_tokens": 5}} {{\'hf_token\': \'{MASK}\'}}'
        " time: 12:30"
    )


def test_values_under_secret_named_keys_are_found_at_any_depth() -> None:
    data = {"files": [{"remote": {"remote_auth_token": "abcdefg"}}, {"API_KEY": 123456}], "port": 8000}
    assert redact.secrets_in_data(data) == {"abcdefg", "123456"}


def test_a_logprobs_token_and_a_tables_key_are_data_not_secrets() -> None:
    text = '{"token": "Mov", "logprob": -6.0} {"key": "g3/R2"}'
    assert redact.text(text) == text


def test_json_with_a_secret_key_still_parses_once_masked() -> None:
    doc = {"api_key": 'a"b\\c', "DB_PASSWORD": 12345678, "x": {"hf_token": None}, "n": 1}
    masked = json.loads(redact.text(json.dumps(doc)))
    assert masked == {"api_key": MASK, "DB_PASSWORD": MASK, "x": {"hf_token": MASK}, "n": 1}


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    doc=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
        lambda inner: (
            st.dictionaries(
                st.sampled_from(["api_key", "remote_auth_token", "HF_TOKEN", "token", "n", "x"])
                | st.text(max_size=6),
                inner,
                max_size=4,
            )
            | st.lists(inner, max_size=3)
        ),
        max_leaves=10,
    )
)
def test_any_json_document_still_parses_once_masked(doc: object) -> None:
    for indent in (None, 2):
        json.loads(redact.text(json.dumps(doc, indent=indent)))
