"""The kvgate CLI on this machine (local transport): exit codes, waivers, gate order, re-render."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(180)


def kvgate(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kvgate.cli", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=150, check=False)


def inventory(tmp_path: Path, expect: dict[str, Any], site: str = "cli") -> Path:
    (tmp_path / "scratch").mkdir(exist_ok=True)
    data = {
        "site": site,
        "hosts": {
            "here": {
                "transport": "local",
                "roles": ["storage-client"],
                "expect": {"pcie_full_link": False, **expect},
            }
        },
        "volumes": {"scratch": {"path": str(tmp_path / "scratch"), "kind": "candidate", "scratch": True}},
    }
    path = tmp_path / f"{site}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def only_run(results: Path, site: str = "cli") -> Path:
    (run,) = (results / site).glob("g1-*")
    return run


def test_out_of_spec_bom_fails_and_a_waiver_accepts_it(tmp_path: Path) -> None:
    inv = inventory(tmp_path, {"memory": {"total_gib": 100000, "tolerance": 0.0}})
    failed = kvgate("run", "g1", "--inventory", str(inv), "--results", str(tmp_path / "r1"), "--no-pdf")
    assert failed.returncode == 1, failed.stderr
    rec = json.loads((only_run(tmp_path / "r1") / "checks.jsonl").read_text().splitlines()[0])
    assert rec["verdict"] == "FAIL"
    assert "≥ 1e+05 GiB" in rec["condition"]

    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(
        yaml.safe_dump(
            {
                "waivers": [
                    {
                        "rule": rec["rule"],
                        "reason": "lab machine has less memory than the BOM",
                        "approver": "QA lead",
                    }
                ]
            }
        )
    )
    waived = kvgate(
        "run", "g1", "--inventory", str(inv), "--results", str(tmp_path / "r2"), "--waivers", str(waivers)
    )
    assert waived.returncode == 0, waived.stderr
    run = only_run(tmp_path / "r2")
    assert "WAIVED" in (run / "report.html").read_text()
    assert "QA lead" in (run / "report.html").read_text()


def test_the_run_records_every_configuration_file_it_read_by_hash(tmp_path: Path) -> None:
    inv = inventory(tmp_path, {})
    proc = kvgate("run", "g1", "--inventory", str(inv), "--results", str(tmp_path / "r"), "--no-pdf")
    assert proc.returncode in (0, 1, 2), proc.stderr  # a verdict, whatever this machine's BOM gives
    files = json.loads((only_run(tmp_path / "r") / "run.json").read_text())["configuration"]["files"]
    assert files["inventory"] == {"path": str(inv), "sha256": hashlib.sha256(inv.read_bytes()).hexdigest()}
    assert files["fio"]["path"].endswith("workloads/fio/baseline.yaml")  # the scale is "full"
    assert {"references", "g3", "g4"} <= set(files)


def test_bad_inventory_is_a_clear_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("site: x\nhosts:\n  h:\n    transport: telnet\n")
    proc = kvgate("run", "g1", "--inventory", str(bad), "--results", str(tmp_path / "r"))
    assert proc.returncode == 4
    assert f"{bad}: hosts.h.transport" in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr
    check = kvgate("inventory", "check", str(bad))
    assert check.returncode == 4


def test_later_gate_refuses_without_a_passed_earlier_gate(tmp_path: Path) -> None:
    inv = inventory(tmp_path, {})
    proc = kvgate("run", "g2", "--inventory", str(inv), "--results", str(tmp_path / "r"))
    assert proc.returncode == 4
    assert "needs a passed g1 run" in " ".join(proc.stderr.split())


def test_resume_of_a_directory_that_is_no_run_is_a_clear_usage_error(tmp_path: Path) -> None:
    proc = kvgate("run", "g4", "--resume", str(tmp_path))  # no --inventory: it would come from run.json
    assert proc.returncode == 4
    assert f"{tmp_path}: not a kvgate run directory (no run.json)" in " ".join(proc.stderr.split())
    assert "Traceback" not in proc.stderr


def test_stop_with_the_soak_host_down_is_a_lab_error(tmp_path: Path) -> None:
    from ports import free_port_pair

    from kvgate.record.store import RunStore

    inv = tmp_path / "inv.yaml"  # nothing listens on the host's port: connection refused
    host = {"address": "127.0.0.1", "port": free_port_pair(), "connect_timeout_s": 5}
    inv.write_text(yaml.safe_dump({"site": "down", "hosts": {"gpu-1": host}}))
    job = {
        "host": "gpu-1",
        "workload": "soak",
        "run_id": "x",
        "state_dir": "/nonexistent",
        "agent": "/x",
        "pid": 1,
        "start_ticks": 1,
    }
    store = RunStore.create(
        tmp_path / "r",
        site="down",
        gate="g4",
        meta={
            "inventory": {"path": str(inv), "sha256": "x"},
            "g4_jobs": {  # as G4 records a soak before its first poll
                "gpu-1/tiny": {"job": job, "work_dir": "/w", "started_at": "t", "engines": [], "spec": {}}
            },
        },
    )
    proc = kvgate("stop", str(store.path))
    assert proc.returncode == 3, proc.stderr
    assert "lab error" in proc.stderr
    assert "gpu-1" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_capture_writes_expectations_this_host_passes(tmp_path: Path) -> None:
    inv = inventory(tmp_path, {})
    captured = kvgate("inventory", "capture", "here", "--inventory", str(inv))
    assert captured.returncode == 0, captured.stderr
    expect = yaml.safe_load(captured.stdout)["hosts"]["here"]["expect"]
    assert expect["cpu"]["threads"] >= 1
    golden = inventory(tmp_path, expect, site="golden")
    proc = kvgate("run", "g1", "--inventory", str(golden), "--results", str(tmp_path / "r"), "--no-pdf")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    checks = (only_run(tmp_path / "r", "golden") / "checks.jsonl").read_text()
    assert checks.count('"verdict": "PASS"') >= 8


def test_report_rerenders_offline_from_the_stored_run(tmp_path: Path) -> None:
    inv = inventory(tmp_path, {"cpu": {"threads": 1}})
    assert (
        kvgate("run", "g1", "--inventory", str(inv), "--results", str(tmp_path / "r"), "--no-pdf").returncode
        == 0
    )
    run = only_run(tmp_path / "r")
    (run / "report.html").unlink()
    proc = kvgate("report", str(run))
    assert proc.returncode == 0, proc.stderr
    assert (run / "report.html").is_file()
    assert (run / "report.pdf").read_bytes().startswith(b"%PDF")
