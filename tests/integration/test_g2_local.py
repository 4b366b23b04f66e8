"""G2 end to end on this machine: fio matrix + agent workloads, forced gate order, report sections."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gate_cli import run_cli

from kvgate.report.numbers import significant

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(600)


def test_g2_smoke_measures_judges_and_reports(tmp_path: Path) -> None:
    scratch, keep = tmp_path / "scratch", tmp_path / "precious"
    scratch.mkdir()
    keep.mkdir()
    (keep / "data.bin").write_bytes(b"customer data")
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        yaml.safe_dump(
            {
                "site": "g2test",
                "scale": "smoke",
                "hosts": {
                    "here": {"transport": "local", "sudo": True, "roles": ["storage-client", "engine"]}
                },
                "volumes": {
                    "scratch": {
                        "path": str(scratch),
                        "kind": "candidate",
                        "scratch": True,
                        "expect": {"max_cv": 1.0},
                    },
                    "precious": {"path": str(keep), "kind": "baseline", "scratch": False},
                },
                "engines": {  # not run by G2: what `kvgate plan` plans from this G2 run
                    "tiny": {
                        "tier_profile": "llama-cpp-disk",
                        "recompute_profile": "llama-cpp-recompute",
                        "volume": "scratch",
                    },
                },
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
        "test: G1 is covered elsewhere",
    ]
    proc = run_cli(cmd, timeout_s=540)

    (run,) = (tmp_path / "r" / "g2test").glob("g2-*")
    checks = [json.loads(x) for x in (run / "checks.jsonl").read_text().splitlines()]
    verdicts = {c["check"]: c["verdict"] for c in checks}
    shown = proc.stderr + json.dumps(verdicts, indent=1)
    # repeatability (G2-FIO-5, CV of the repeats) is the machine's: on a shared 2-core VM with other
    # work running, random reads vary past any bound; every other check must pass
    unsteady = {c for c, v in verdicts.items() if v == "FAIL" and c.endswith(".cv")}
    assert proc.returncode == (1 if unsteady else 0), shown
    assert {v for c, v in verdicts.items() if c not in unsteady} <= {"PASS", "SKIP"}, shown
    assert verdicts["volume[scratch].kv_restore.checksums"] == "PASS"
    assert verdicts["volume[scratch].fio.seqread-1m.bw"] == "PASS"
    assert {v for c, v in verdicts.items() if c.startswith("volume[precious]")} == {"SKIP"}
    assert sorted(p.name for p in keep.iterdir()) == ["data.bin"]  # nothing written to a non-scratch volume
    assert list(scratch.iterdir()) == []  # G2 removes its own files
    meta = json.loads((run / "run.json").read_text())
    assert meta["forced"][0]["reason"] == "test: G1 is covered elsewhere"
    html = (run / "report.html").read_text()
    assert "G2 fio baseline" in html
    assert "<svg" in html
    assert "test: G1 is covered elsewhere" in html
    assert (run / "artifacts" / "here" / "g2" / "scratch" / "measurements.json").is_file()
    assert verdicts["volume[scratch].best-single-read.bw"] == "PASS"  # the most the device delivered, cold
    assert "read ceiling MB/s (where)" in html
    stored = meta["g2_rows"]["here/scratch"]  # numbers, laid out as cells when the report is rendered
    assert stored["measurements"]["seqread-1m.read_bw_bytes_per_s"]["unit"] == "bytes/s"
    bw = stored["measurements"]["seqread-1m.read_bw_bytes_per_s"]["value"]
    assert f">{significant(bw / 1e6)}<" in html  # MB/s, three significant figures
    sweep = {(bs, parallelism) for bs, parallelism, _ in stored["sweep"]}
    assert ("4m", 32) in sweep  # past the grid's 16: the KV restore's 8 requests × 4 readers of 4 MiB
    assert stored["measurements"]["sweep-read.reach_parallelism"]["value"] == 32
    # the ceiling is the device's: no read is above it (an edge knee, or parallel readers slower than one
    # on a busy machine, may be said; neither is a read past the ceiling)
    above = [c for c in meta["contradictions"].get("here/scratch", []) if "ceiling" in c["second"]["name"]]
    assert above == []
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
    assert planned.returncode == 0, planned.stderr
    said = " ".join(planned.stdout.split())
    if unsteady:  # a run with a FAIL is not what a plan builds on (a busy machine makes repeats vary)
        assert "no usable G2 run" in said, said
    else:
        raised = stored["measurements"].get("ceiling.raised_by")  # a G2 read beat the fio sweep's best
        how = "(bs " if raised is None else f"({raised['value'].split(' read ')[0]} read "
        named = re.escape(f"G2 run {run.name} (BASELINE RECORDED, kvgate ") + r"[\w+]+\): read ceiling "
        named += re.escape(how)
        assert re.search(named, said), said  # this run's ceiling, named with its verdict, not a guess
