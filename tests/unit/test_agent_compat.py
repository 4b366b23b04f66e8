"""The agent is stdlib-only, python-3.8-clean, and ships as a deterministic zipapp."""

import ast
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvgate.probes import agentctl

AGENT = Path(agentctl.__file__).parent / "agent"
EVIDENCE = AGENT.parent / "evidence"  # shipped in the zipapp beside the agent
SOURCES = sorted(AGENT.glob("*.py")) + sorted(EVIDENCE.glob("*.py"))
# APIs newer than 3.8 that the syntax check cannot see
NEWER_APIS = (
    "randbytes",
    "removeprefix",
    "removesuffix",
    "cancel_futures",
    "file_digest",
    "strict=",
    "slots=True",
)


def test_agent_sources_exist() -> None:
    assert {p.name for p in SOURCES} >= {"__main__.py", "kv_restore.py", "model_load.py", "checkpoint.py"}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_agent_parses_as_python_38_and_avoids_newer_apis(path: Path) -> None:
    source = path.read_text()
    ast.parse(source, feature_version=(3, 8))  # no match, no parenthesised with, no except*
    assert "from __future__ import annotations" in source or path.name == "__init__.py"
    assert [api for api in NEWER_APIS if api in source] == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_agent_imports_only_the_stdlib_and_itself(path: Path) -> None:
    optional = {"numpy", "safetensors"}  # the safetensors loader: reported unavailable when absent
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            shipped = name.startswith(
                ("kvgate.probes.agent", "kvgate.probes.loadgen", "kvgate.probes.evidence")
            )  # in the zipapp
            ok = shipped or top in sys.stdlib_module_names or top in optional
            assert ok, f"{path.name} imports {name}"


def test_zipapp_bytes_are_deterministic(tmp_path: Path) -> None:
    first = agentctl.build_zipapp(tmp_path / "a")
    second = agentctl.build_zipapp(tmp_path / "b")
    assert first.read_bytes() == second.read_bytes()
    digest = hashlib.sha256(first.read_bytes()).hexdigest()
    assert first.name == f"agent-{digest[:16]}.pyz"


def test_zipapp_runs_isolated_from_site_packages(tmp_path: Path) -> None:
    pyz = agentctl.build_zipapp(tmp_path)
    res = subprocess.run(
        [sys.executable, "-I", str(pyz), "--help"], capture_output=True, text=True, timeout=30, check=False
    )
    assert res.returncode == 0, res.stderr
    assert "kv-restore" in res.stdout
    assert "model-load" in res.stdout
    assert "checkpoint" in res.stdout
    res = subprocess.run(
        [sys.executable, "-I", str(pyz), "evidence", "resolve", json.dumps({"path": str(tmp_path)})],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout)["result"]["mount_point"].startswith("/")
