"""The agent is stdlib-only, python-3.8-clean, and ships as a deterministic zipapp."""

import ast
import io
import json
import subprocess
import sys
import zipfile
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


def test_zipapp_bytes_are_deterministic() -> None:
    assert agentctl.zipapp_bytes() == agentctl.zipapp_bytes()


def test_the_zipapp_ships_the_agent_load_generator_and_evidence_and_no_test_server() -> None:
    """Before, the tests' null server lived in kvgate.probes.loadgen and was shipped to every host."""
    with zipfile.ZipFile(io.BytesIO(agentctl.zipapp_bytes())) as zf:  # the shebang line is skipped
        names = set(zf.namelist())
    shipped = {f"kvgate/probes/{p.parent.name}/{p.name}" for p in (AGENT.parent / "loadgen").glob("*.py")}
    shipped |= {f"kvgate/probes/{p.parent.name}/{p.name}" for p in SOURCES}
    assert names == shipped | {"__main__.py", "kvgate/__init__.py", "kvgate/probes/__init__.py"}
    assert not [n for n in names if "nullserver" in n]


def test_zipapp_runs_isolated_from_site_packages(tmp_path: Path) -> None:
    pyz = tmp_path / "agent.pyz"
    pyz.write_bytes(agentctl.zipapp_bytes())
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


@pytest.mark.parametrize("mode", [["--help"], ["sessions", "--help"]])
def test_the_load_generator_zipapp_imports_all_it_ships(tmp_path: Path, mode: list[str]) -> None:
    """G3's loadgen-*.pyz runs the load generator and the agent's sessions driver; the agent imports the
    evidence module, which this zipapp once left out (every capacity arm ERROR: ModuleNotFoundError)."""
    from kvgate.orchestration.g3 import client

    pyz = tmp_path / "loadgen.pyz"
    pyz.write_bytes(client.zipapp_bytes())
    res = subprocess.run(
        [sys.executable, "-I", str(pyz), *mode], capture_output=True, text=True, timeout=30, check=False
    )
    assert res.returncode == 0, res.stderr
