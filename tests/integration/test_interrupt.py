"""Ctrl-C in the middle of a gate: prompt exit, partial run marked interrupted, scratch cleaned."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from gate_cli import CLI_ENV, after_ctrl_c, running

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(300)


def test_ctrl_c_during_g2_stops_promptly_and_leaves_a_readable_partial_run(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        yaml.safe_dump(
            {
                "site": "intr",
                "scale": "smoke",
                "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["storage-client"]}},
                "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
            }
        )
    )
    cmd = [
        sys.executable,
        "-m",
        "kvgate.cli",
        "run",
        "g2",
        "--inventory",
        str(inv),
        "--results",
        str(tmp_path / "r"),
        "--force-gate-order",
        "test",
        "--no-pdf",
    ]
    gate = subprocess.Popen(
        cmd, cwd=REPO, env=CLI_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not list((tmp_path / "r").glob("intr/g2-*/artifacts/here/g2/scratch/fio/*")):
        assert time.monotonic() < deadline, "the gate never started measuring"
        time.sleep(0.2)

    gate.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = after_ctrl_c(gate, 120)

    assert time.monotonic() - sent < 30, "Ctrl-C must not wait for the measurement to finish"
    assert gate.returncode == 5, err
    (run,) = (tmp_path / "r" / "intr").glob("g2-*")
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "interrupted"
    assert meta["ended_at"]
    assert (run / "report.html").is_file()
    assert "--resume" in " ".join(err.split())
    assert list(scratch.iterdir()) == []  # our files removed even after the interrupt


def slow_tool(tmp_path: Path) -> tuple[Path, Path]:
    """A BOM tool whose version probe hangs while the returned flag file exists; (its bin dir, flag)."""
    bin_dir, hang = tmp_path / "bin", tmp_path / "hang"
    bin_dir.mkdir()
    hang.touch()
    tool = bin_dir / "kvslowtool"
    tool.write_text(f"#!/bin/sh\nwhile [ -e {hang} ]; do sleep 0.1; done\necho 'kvslowtool 1.2.3'\n")
    tool.chmod(0o755)
    return bin_dir, hang


def test_ctrl_c_during_g1_facts_saves_no_interrupted_fact_and_its_resume_command_completes(
    tmp_path: Path,
) -> None:
    bin_dir, hang = slow_tool(tmp_path)
    expect = {"tools": {"kvslowtool": ">= 1.0"}, "nvme": {"count": 0}, "gpus": {"count": 0}}
    host = {"transport": "local", "roles": ["storage-client"], "expect": expect}
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump({"site": "intr1", "hosts": {"here": host}}))
    # this VM's PCIe check is INVALID (no link attributes): waived, so only a resume that keeps
    # --waivers passes
    waiver = {"rule": "G1-PCIE-1", "reason": "a VM exposes no PCIe links", "approver": "kvgate tests"}
    (tmp_path / "waivers.yaml").write_text(yaml.safe_dump({"waivers": [waiver]}))
    env = CLI_ENV | {"PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(REPO)}
    # no --no-pdf: an interrupted run renders no PDF (that took 9 s after Ctrl-C, issue 27)
    argv = ["run", "g1", "--inventory", "inv.yaml", "--results", "r", "--waivers", "waivers.yaml"]
    gate = subprocess.Popen(
        [sys.executable, "-m", "kvgate.cli", *argv], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not running(str(bin_dir / "kvslowtool")):  # the last facts family, probing the BOM's tool
        assert gate.poll() is None, gate.communicate()[1]
        assert time.monotonic() < deadline, "the gate never probed kvslowtool"
        time.sleep(0.1)
    gate.send_signal(signal.SIGINT)
    _, err = after_ctrl_c(gate, 60)

    assert gate.returncode == 5, err
    (run,) = (tmp_path / "r" / "intr1").glob("g1-*")
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "interrupted"
    # an interrupted probe is not a fact: nothing of the host's half-collected facts is kept
    assert not (run / "facts" / "here.json").exists()
    assert "here" not in meta.get("manifest", {})
    assert "here" not in meta.get("tool_versions", {})
    assert "gate interrupted" in err
    assert (run / "report.html").is_file()
    assert not (run / "report.pdf").exists()
    (line,) = [ln for ln in err.splitlines() if ln.startswith("resume with: ")]
    command = shlex.split(line.removeprefix("resume with: "))
    assert command == [
        "kvgate",
        "run",
        "g1",
        "--resume",
        str(run.relative_to(tmp_path)),
        "--waivers",
        "waivers.yaml",
    ]

    hang.unlink()
    resumed = subprocess.run(
        [sys.executable, "-m", "kvgate.cli", *command[1:], "--no-pdf"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "complete"
    assert meta["tool_versions"]["here"]["kvslowtool"] == "1.2.3"
    facts = json.loads((run / "facts" / "here.json").read_text())
    assert facts["families"]["tools"]["errors"] == {}
