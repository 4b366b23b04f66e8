"""`kvgate preflight` on this machine: real counters, a real llama.cpp tier cycle, a real tmpfs.

A candidate volume on this VM's disk and one on tmpfs (/dev/shm): the disk's counters
move with an O_DIRECT read, tmpfs has no device, so its counter probe is INVALID with
that reason and the preflight exits 2 (a gate would be INVALID by construction). The
llama.cpp deployment's tier probe runs the whole cycle — populate, restart, restore —
and passes, and every other engine G3 starts for it (recompute, the capacity and volume
arms) starts once and passes, and so does R9's own model load from its copy on the candidate.
Recorded like a gate run (run.json, checks.jsonl, report, manifest).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import yaml
from gate_cli import run_cli
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

from kvgate.probes.engines.tinymodel import write_gguf

REPO = Path(__file__).resolve().parents[2]
pytestmark = LLAMA_ENGINE


def test_preflight_says_what_can_be_measured_and_why_not(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    base = tmp_path / "base"
    base.mkdir()
    copies = {}
    for volume, d in (("disk", disk), ("base", base)):  # R9's model on each volume
        (d / "r9").mkdir()
        copies[volume] = write_gguf(d / "r9" / "tiny.gguf")
    shm = Path(tempfile.mkdtemp(prefix="kvgate-preflight-", dir="/dev/shm"))
    try:
        inv = tmp_path / "inv.yaml"
        inv.write_text(
            yaml.safe_dump(
                {
                    "site": "pre",
                    "scale": "smoke",
                    "hosts": {
                        "here": {"transport": "local", "sudo": True, "roles": ["engine", "storage-client"]}
                    },
                    "volumes": {
                        "disk": {"path": str(disk), "kind": "candidate", "scratch": True},
                        "shm": {"path": str(shm), "kind": "candidate", "scratch": True},
                        "base": {"path": str(base), "kind": "baseline", "scratch": True},
                    },
                    "engines": {
                        "tiny": {
                            "tier_profile": "llama-cpp-disk",
                            "recompute_profile": "llama-cpp-recompute",
                            "volume": "disk",
                            "baseline_volume": "base",  # R2 compares the tier on it with the candidate
                            "port": free_port_pair(1),
                        }
                    },
                    "model_loads": {  # R9's own model: started once from the candidate's copy
                        "tiny-r9": {
                            "hosts": ["here"],
                            "profile": "llama-cpp-recompute",
                            "copies": {v: str(p) for v, p in copies.items()},
                            "python": sys.executable,
                            "port": free_port_pair(1),
                        }
                    },
                }
            )
        )
        cmd = [
            sys.executable,
            "-m",
            "kvgate.cli",
            "preflight",
            "--inventory",
            str(inv),
            "--no-pdf",
            "--results",
            str(tmp_path / "r"),
        ]
        proc = run_cli(cmd, timeout_s=840)
    finally:
        shutil.rmtree(shm, ignore_errors=True)

    [run] = (tmp_path / "r" / "pre").glob("preflight-*")
    checks = {
        json.loads(line)["check"]: json.loads(line)
        for line in (run / "checks.jsonl").read_text().splitlines()
    }
    shown = proc.stderr + json.dumps({k: (c["verdict"], c["condition"]) for k, c in checks.items()}, indent=1)
    assert proc.returncode == 2, shown  # INVALID: the tmpfs volume cannot be measured
    assert checks["volume[shm].counters"]["verdict"] == "INVALID", shown
    assert "tmpfs" in checks["volume[shm].counters"]["condition"], shown
    assert checks["volume[disk].counters"]["verdict"] == "PASS", shown
    for probe in ("start", "tokenizer", "tier-cycle"):
        assert checks[f"engine[tiny].{probe}"]["verdict"] == "PASS", shown
    # llama.cpp's server has no /metrics: "0 of 0 counters missing" would be a PASS of nothing
    assert checks["engine[tiny].metrics"]["verdict"] == "SKIP", shown
    assert "has no /metrics (metrics: null)" in checks["engine[tiny].metrics"]["condition"], shown
    starts = {k: c for k, c in checks.items() if k.startswith("engine[tiny].start[")}
    assert "engine[tiny].start[recompute]" in starts, shown  # every other engine G3 starts, once
    for c in starts.values():
        assert c["verdict"] == "PASS", shown
        assert "ready in " in c["condition"], shown  # its start time, as measured
    r9 = checks["model-load[tiny-r9].start"]
    assert r9["verdict"] == "PASS", shown
    assert "(from its copy on disk)" in r9["condition"], shown  # the candidate's copy
    assert checks["sudo"]["verdict"] == "PASS", shown  # root needs no sudo
    assert "what can be measured" in proc.stderr  # the table, worst first
    assert (run / "manifest.json").is_file()
    reach = json.loads((run / "run.json").read_text())["g3_reach"]  # what G3 could judge here
    assert len(reach["references"]) == 12, shown
    assert set(reach["references"]) - set(reach["unjudged"]) == set(), reach  # smoke: none comparable
    g4 = json.loads((run / "run.json").read_text())["g4_reach"]["here/tiny"]  # and what G4 could judge
    assert g4["unjudged"]["paths"] == "no NVMe-oF controller: no multipath path to follow", g4
    assert "coverage" not in g4["unjudged"], g4
    assert "readiness check" in (run / "report.html").read_text()
    assert "G4 can judge " in (run / "report.html").read_text()
    assert list(disk.iterdir()) == [disk / "r9"]  # the probe's files and the engines' directories are gone
