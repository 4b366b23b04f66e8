"""G1 end to end over real SSH: two loopback sshd hosts, the real CLI, the stored run and report.

Both "hosts" are this machine reached through their own sshd (own port, host key
and client key), so every fact is collected over paramiko exactly as in a lab.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from sshd import SSHServer, write_known_hosts

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(240)


def host_entry(server: SSHServer, known_hosts: Path, tools: dict[str, str] | None = None) -> dict[str, Any]:
    expect: dict[str, Any] = {
        "cpu": {"threads": 1},
        "memory": {"total_gib": 1, "tolerance": 0.0},
        "nvme": {"count": 0},
        "gpus": {"count": 0},
        "tools": {"fio": ">= 3.28", **(tools or {})},
        "pcie_full_link": False,
    }
    return {
        "address": "127.0.0.1",
        "port": server.port,
        "user": "root",
        "key_file": str(server.client_key),
        "known_hosts": str(known_hosts),
        "connect_timeout_s": 5,
        "roles": ["storage-client", "engine"],
        "expect": expect,
    }


def write_inventory(path: Path, hosts: dict[str, dict[str, Any]], scratch: Path) -> Path:
    scratch.mkdir(exist_ok=True)
    volumes = {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True, "min_free_gib": 0.1}}
    path.write_text(yaml.safe_dump({"site": "loopback", "hosts": hosts, "volumes": volumes}))
    return path


def kvgate(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kvgate.cli", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def run_dir(results: Path) -> Path:
    (path,) = (results / "loopback").glob("g1-*")
    return path


def checks(run: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in (run / "checks.jsonl").read_text().splitlines():
        rec = json.loads(line)
        out[rec["id"]] = rec
    return out


def test_g1_over_ssh_passes_and_renders_every_check(
    tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer], known_hosts: Path
) -> None:
    a, b = sshd_pair
    hosts = {"node-a": host_entry(a, known_hosts), "node-b": host_entry(b, known_hosts)}
    inv = write_inventory(tmp_path / "inv.yaml", hosts, tmp_path / "scratch")
    results = tmp_path / "results"

    proc = kvgate("run", "g1", "--inventory", str(inv), "--results", str(results))

    assert proc.returncode == 0, proc.stderr
    run = run_dir(results)
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete"
    recs = checks(run)
    assert {r["host"] for r in recs.values()} == {"node-a", "node-b"}
    assert set(recs) == set(meta["planned"])
    assert all(r["verdict"] in ("PASS", "SKIP") for r in recs.values())
    assert (run / "artifacts" / "node-b" / "cpu" / "lscpu.txt").is_file()
    pdf_text = subprocess.run(
        ["pdftotext", "-layout", str(run / "report.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "PASS" in pdf_text
    flat = " ".join(pdf_text.split())
    for check_id in recs:
        check = check_id.partition("/")[2]
        assert check.split("[")[0] in flat, check_id
    suite = ET.parse(run / "junit.xml").getroot()
    cases = suite.findall(".//testcase")
    assert len(cases) == len(recs) + 1  # every check, and the hardware families it could not judge
    assert cases[-1].get("name") == "hardware families judged"
    assert "limited coverage" in flat  # the test hosts' BOM orders no NVMe drive, NVMe-oF subsystem or GPU


def test_changed_host_key_is_refused_and_only_that_host_errors(
    tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer]
) -> None:
    a, b = sshd_pair
    known = write_known_hosts(tmp_path / "known_hosts", [a])
    other_key = (a.dir / "host_ed25519_key.pub").read_text().split()[:2]
    with known.open("a") as f:  # b's entry holds a's key: b's real key is a "changed" one
        f.write(f"{b.known_hosts_name} {' '.join(other_key)}\n")
    hosts = {"node-a": host_entry(a, known), "node-b": host_entry(b, known)}
    inv = write_inventory(tmp_path / "inv.yaml", hosts, tmp_path / "scratch")

    proc = kvgate("run", "g1", "--inventory", str(inv), "--results", str(tmp_path / "results"))

    assert proc.returncode == 3, proc.stderr  # lab error: not evaluated
    recs = checks(run_dir(tmp_path / "results"))
    b_recs = [r for r in recs.values() if r["host"] == "node-b"]
    assert b_recs
    assert all(r["verdict"] == "ERROR" for r in b_recs)
    assert "host key" in b_recs[0]["condition"].lower()
    assert "changed" in b_recs[0]["condition"].lower()
    assert all(r["verdict"] in ("PASS", "SKIP") for r in recs.values() if r["host"] == "node-a")


def slow_tool(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A tool whose --version signals it started, then blocks until released."""
    started, release = tmp_path / "started", tmp_path / "release"
    tool = tmp_path / "slowtool"
    tool.write_text(
        f"#!/bin/sh\ntouch {started}\nfor i in $(seq 100); do [ -e {release} ] && break; sleep 0.1; done\n"
        "echo slowtool 1.0\n"
    )
    tool.chmod(0o755)
    return tool, started, release


def wait_for(path: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_sshd_killed_mid_run_errors_that_host_and_resume_finishes(
    tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer], known_hosts: Path
) -> None:
    a, b = sshd_pair
    tool, started, release = slow_tool(tmp_path)
    hosts = {
        "node-a": host_entry(a, known_hosts),
        "node-b": host_entry(b, known_hosts, {str(tool): ">= 1.0"}),
    }
    # node-a checks the same tool: both hosts wait in it until node-b's sshd is killed
    hosts["node-a"]["expect"]["tools"][str(tool)] = ">= 1.0"
    inv = write_inventory(tmp_path / "inv.yaml", hosts, tmp_path / "scratch")
    results = tmp_path / "results"
    cmd = [
        sys.executable,
        "-m",
        "kvgate.cli",
        "run",
        "g1",
        "--inventory",
        str(inv),
        "--results",
        str(results),
    ]
    gate = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    wait_for(started)  # a host is inside its facts collection now
    b.kill()  # drops node-b's connection mid-command
    release.touch()
    _, err = gate.communicate(timeout=180)

    assert gate.returncode == 3, err
    run = run_dir(results)
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "incomplete"
    first = checks(run)
    b_errors = [r for r in first.values() if r["host"] == "node-b"]
    assert b_errors
    assert all(r["verdict"] == "ERROR" for r in b_errors)
    assert "node-b" in b_errors[0]["condition"]
    assert "connection" in b_errors[0]["condition"].lower()
    assert all(r["verdict"] in ("PASS", "SKIP") for r in first.values() if r["host"] == "node-a")
    assert (run / "report.html").is_file()  # the partial run is rendered and readable

    b.restart()  # same port and host key
    proc = kvgate("run", "g1", "--inventory", str(inv), "--results", str(results), "--resume", str(run))

    assert proc.returncode == 0, proc.stderr
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    lines = [json.loads(x) for x in (run / "checks.jsonl").read_text().splitlines()]
    a_lines = [x for x in lines if x["host"] == "node-a"]
    assert len(a_lines) == len({x["id"] for x in a_lines})  # node-a was not re-run
    assert all(r["verdict"] in ("PASS", "SKIP") for r in checks(run).values())
