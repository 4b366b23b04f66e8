"""G3 held to G2's storage figures, on the real llama.cpp engine and its disk tier (issue 13 item 7).

A restore faster than the storage could have delivered it was served by something other
than the SSD: INVALID, never PASS. The disk of this VM cannot be made slower, so the G2
run G3 reads is a stored run that measured it slower (0.01 GB/s at best, a run directory as
G2 writes it: run.json, a PASS check, measurements.json). The real restores (≈ 96 MB in
≈ 0.2 s) then cannot have come from it. On main G3 read no G2 figure: the same restores
passed the cold proof.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import yaml
from gate_cli import run_cli
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

from kvgate.base.criteria import Verdict
from kvgate.record import JudgementRecord, write_manifest
from kvgate.record.store import RunStore
from kvgate.report.model import load_run

REPO = Path(__file__).resolve().parents[2]
pytestmark = LLAMA_ENGINE
SLOW = {"value": 0.01e9, "unit": "B/s", "invalid_reason": None, "evidence": []}


def stored_g2(root: Path, inv: Path) -> Path:
    """A passed G2 run of this inventory that measured the candidate at 0.01 GB/s."""
    sha = hashlib.sha256(inv.read_bytes()).hexdigest()
    store = RunStore.create(
        root,
        site="g3pred",
        gate="g2",
        meta={"inventory": {"path": str(inv), "sha256": sha}, "planned": ["here/c"]},
    )
    store.record(JudgementRecord(id="here/c", host="here", check="c", verdict=Verdict.PASS, condition="c"))
    ms = {"ceiling.read_bw_bytes_per_s": SLOW, "ceiling.best_read_bw_bytes_per_s": SLOW}
    store.artifact("here", "g2/scratch/measurements.json", json.dumps(ms))
    store.finish("complete")
    write_manifest(store.path)  # as every gate run ends: G3 refuses a G2 run without one
    return store.path


def test_restores_faster_than_g2_measured_the_storage_are_invalid_and_predicted_beside_measured(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inv = tmp_path / "inv.yaml"
    engine = {
        "tier_profile": "llama-cpp-disk",
        "recompute_profile": "llama-cpp-recompute",
        "volume": "scratch",
        "port": free_port_pair(1),
        "capacity_figure": False,  # the restores are what this test is about
    }
    inv.write_text(
        yaml.safe_dump(
            {
                "site": "g3pred",
                "scale": "smoke",
                "hosts": {
                    "here": {"transport": "local", "sudo": True, "roles": ["engine", "storage-client"]}
                },
                "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
                "engines": {"tiny": engine},
            }
        )
    )
    g2 = stored_g2(tmp_path / "r", inv)
    cmd = [
        sys.executable,
        "-m",
        "kvgate.cli",
        "run",
        "g3",
        "--inventory",
        str(inv),
        "--no-pdf",
        "--results",
        str(tmp_path / "r"),
    ]
    proc = run_cli(cmd, timeout_s=1500)

    runs = list((tmp_path / "r" / "g3pred").glob("g3-*"))
    assert len(runs) == 1, proc.stderr[-3000:]  # a refusal (gate order, inventory) says why here
    (run,) = runs
    checks = {c["check"]: c for c in map(json.loads, (run / "checks.jsonl").read_text().splitlines())}
    shown = proc.stderr[-3000:] + json.dumps({k: c["condition"] for k, c in checks.items()}, indent=1)
    cold = checks["engine[tiny].ssd-restore.cold-proof"]
    assert cold["verdict"] == "INVALID", shown
    assert "more than the storage can deliver (G2 best 10 MB/s + 25%)" in cold["condition"], shown
    r2 = checks["engine[tiny].ttft-p50-reduction"]  # R2 compares volumes: this deployment names no baseline
    assert r2["verdict"] == "SKIP", shown
    assert "names no baseline volume" in r2["condition"], shown
    assert proc.returncode == (1 if "FAIL" in {c["verdict"] for c in checks.values()} else 2), shown
    html = (run / "report.html").read_text()
    assert "G3 predicted (tiering planner) vs measured" in html
    tables = {s.title: s.data["rows"] for s in load_run(run).sections}  # laid out from the record
    (row,) = tables["G3 predicted (tiering planner) vs measured"]  # llama.cpp: one prompt at a time
    assert row[1] == "one prompt"
    pair, _, miss = row[3].partition(" (")  # "10.7 / 0.186 (0.017× the prediction)"
    predicted, measured = (float(x.replace(",", "")) for x in pair.split(" / "))  # 1,355: grouped
    assert predicted > 5 * measured  # 0.01 GB/s predicts ~10 s; the engine restored in a fraction
    assert miss.endswith("× the prediction)")  # the miss said beside it
    plan = [
        sys.executable,
        "-m",
        "kvgate.cli",
        "plan",
        "--inventory",
        str(inv),
        "--results",
        str(tmp_path / "r"),
    ]
    planned = subprocess.run(plan, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    text = " ".join(planned.stdout.split())
    named = re.escape(f"G2 run {g2.name} (") + r"[A-Z ]+, kvgate [\w+]+\): read ceiling"
    assert re.search(named, text), planned.stdout + planned.stderr  # the same G2 run, read by the plan
    assert f"measured: G3 {run}: recompute arm" in text  # and this run's prefill rate
