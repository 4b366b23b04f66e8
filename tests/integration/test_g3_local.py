"""G3 end to end on this machine: the real llama.cpp engine, its disk tier on a scratch "candidate".

`kvgate run g3` on a temporary inventory (local transport, forced gate order): the
recompute and ssd-restore arms run with real engines, the restore is proven cold
by the device and engine-process counters, outputs match recompute, and the report
shows the arms table. The capacity arms (kvgate's own figure, judged by no check) run llama.cpp
without its disk tier (its RAM prompt cache, llama-cpp-ram) and with it (llama-cpp-disk-keep) on
sessions over 16 shared documents: the dram-only arm cannot keep them, the ssd-tier arm restores
them from the candidate's device, on one engine and on two instances driven together. R2/R3
compare volumes, and this deployment names no baseline volume: SKIP saying so. Model loading
(service load) and checkpoint run on the candidate and a "baseline" directory: both on this VM's
one disk, so R9/R1 are measured but declared not evaluable (SKIP with the numbers). Secrets in an
instance's environment reach no file of the run, its PDF included.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from gate_cli import run_cli
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

REPO = Path(__file__).resolve().parents[2]
pytestmark = LLAMA_ENGINE


def inventory(
    tmp_path: Path, scratch: Path, baseline: Path | None = None, instances: list[dict[str, str]] | int = 2
) -> Path:
    inv = tmp_path / "inv.yaml"
    volumes: dict[str, Any] = {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}}
    if baseline is not None:
        volumes["nfs"] = {"path": str(baseline), "kind": "baseline", "scratch": True}
    data: dict[str, Any] = {
        "site": "g3test",
        "scale": "smoke",
        "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["engine", "storage-client"]}},
        "volumes": volumes,
        "engines": {
            "tiny": {
                "tier_profile": "llama-cpp-disk",
                "recompute_profile": "llama-cpp-recompute",
                "volume": "scratch",
                "port": free_port_pair(2),
                "instances": instances,
                "engine_args": ["--n_batch", "512"],  # the site's extra flags reach every engine
            }
        },
    }
    inv.write_text(yaml.safe_dump(data))
    return inv


def run_g3(tmp_path: Path, inv: Path, *, pdf: bool = False) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "kvgate.cli",
        "run",
        "g3",
        "--inventory",
        str(inv),
        *([] if pdf else ["--no-pdf"]),
        "--results",
        str(tmp_path / "r"),
        "--force-gate-order",
        "test: G2 runs elsewhere",
    ]
    return run_cli(cmd, timeout_s=1500)


def test_g3_smoke_restores_cold_from_the_candidate_and_judges_against_r2(tmp_path: Path) -> None:
    scratch, baseline = tmp_path / "scratch", tmp_path / "nfs"
    scratch.mkdir()
    baseline.mkdir()
    # a Hugging Face token (a known shape) and a key only its name marks as secret, in the environment
    # of the first instance (every arm's engine on it): neither may reach any file of the run
    token, key = "hf_" + secrets.token_hex(17), "plain-" + secrets.token_hex(8)
    planted = [{"HF_TOKEN": token, "SITE_API_KEY": key}, {}]
    proc = run_g3(tmp_path, inventory(tmp_path, scratch, baseline, planted), pdf=True)

    (run,) = (tmp_path / "r" / "g3test").glob("g3-*")
    checks = {c["check"]: c for c in map(json.loads, (run / "checks.jsonl").read_text().splitlines())}
    verdicts = {k: c["verdict"] for k, c in checks.items()}
    shown = proc.stderr[-3000:] + json.dumps({k: c["condition"] for k, c in checks.items()}, indent=1)
    # the evidence checks must hold on this machine; the reference verdicts are what they measure
    for evidence in ("write-through", "cold-proof", "correctness"):
        assert verdicts[f"engine[tiny].ssd-restore.{evidence}"] == "PASS", shown
    # R2/R3 compare the disk tier on a baseline volume with the candidate, as the seed's reports did; this
    # deployment names none, so they are SKIP saying so (the capacity arms below are kvgate's own figure)
    for r2r3 in (
        "ttft-p50-reduction",
        "throughput-gain-conc8",
        "throughput-gain-conc16",
        "throughput-gain-whole-machine",
    ):
        assert verdicts[f"engine[tiny].{r2r3}"] == "SKIP", shown
        assert "names no baseline volume" in checks[f"engine[tiny].{r2r3}"]["condition"], shown
    for recompute_row in ("recompute-ttft-speedup", "recompute-throughput-speedup"):  # one request at a time
        assert verdicts[f"engine[tiny].{recompute_row}"] == "SKIP", shown
    assert "PASS" not in {verdicts[k] for k in verdicts if "cold-read" in k}
    assert "names no serial and parallel reader" in checks["engine[tiny].cold-read-bw-gain"]["condition"]
    expected_code = {"PASS": 0, "FAIL": 1}["FAIL" if "FAIL" in verdicts.values() else "PASS"]
    assert proc.returncode == expected_code, shown

    arms = json.loads((run / "artifacts/here/g3/tiny/arms.json").read_text())
    restore, recompute = arms["arms"]["ssd-restore"], arms["arms"]["recompute"]
    assert restore["completed"] == recompute["completed"] >= 3
    predicted = restore["predicted_bytes_p50"]
    assert restore["engine_read_bytes_p50"] >= 0.9 * predicted  # the engine read the state from storage
    assert restore["device_read_bytes_p50"] >= 0.9 * predicted  # and the candidate's device served it
    assert restore["hit_tokens_p50"] >= 0.9 * restore["prompt_tokens_p50"]
    assert restore["ttft_p50_s"] < recompute["ttft_p50_s"]
    windows = [t["window"] for t in arms["trials"]["ssd-restore"]]
    assert all(w["caches_dropped"] for w in windows)

    # the capacity arms: every round trusted; dram-only reused next to nothing, ssd-tier the documents
    rounds = [t for ts in (arms["capacity_trials"], arms["whole_machine_trials"]) for t in ts.values()]
    assert not [t["invalid_reason"] for ts in rounds for t in ts if t["invalid_reason"]], rounds
    for level in ("c4", "c8", "c16", "whole"):
        dram, ssd = arms["arms"][f"dram-only@{level}"], arms["arms"][f"ssd-tier@{level}"]
        # its RAM cache keeps one document for good, on each instance of the whole machine: there (rows
        # shown, not judged on llama.cpp) dram-only reused half of what ssd-tier did in one run here
        share = 0.5 if level != "whole" else 0.75
        assert dram["hit_tokens_p50"] < share * ssd["hit_tokens_p50"], level
        assert ssd["engine_read_bytes_p50"] > 0, level  # the disk tier was read, by the engine
        assert ssd["completed"] == dram["completed"] >= 1, level  # how fast: the verdicts say (a shared disk)
    assert arms["arms"]["ssd-tier@c16"]["prompt_tokens_p50"] == pytest.approx(1024, rel=0.05)  # fitted turns

    meta = json.loads((run / "run.json").read_text())
    assert set(meta["engines"]["here/tiny"]) == {
        "probe",
        "recompute",
        "ssd-restore",
        "dram-only",
        "ssd-tier",
    }  # the tier probe ran first
    assert "keep_disk_cache.py" in " ".join(meta["engines"]["here/tiny"]["ssd-tier"]["argv"])
    assert "ram" in meta["engines"]["here/tiny"]["dram-only"]["argv"]
    assert arms["tier_probe"]["reason"] is None  # ... and found the tier measurable
    assert "--cache_type" in meta["engines"]["here/tiny"]["ssd-restore"]["argv"]
    for arm in ("recompute", "ssd-restore"):
        assert meta["engines"]["here/tiny"][arm]["argv"][-2:] == ["--n_batch", "512"]
    assert meta["reference_notes"], "the references' own disagreements are part of the record"
    # as a browser shows it: <wbr> and .nobr spans only say where a line may wrap (kvgate.report.html)
    html = re.sub(
        r'<span class="nobr">([^<]*)</span>', r"\1", (run / "report.html").read_text().replace("<wbr>", "")
    )
    assert "G3 arms: recompute vs SSD restore vs warm" in html
    assert "G3 restore evidence" in html
    assert "serves one request at a time" in html
    assert "ssd-tier@whole" in html  # the whole-machine rows
    assert "against the seed" in html
    assert "G3 model loading and checkpoint" in html
    assert list(scratch.iterdir()) == list(baseline.iterdir()) == []  # G3 removes its own directories

    # R9/R1 ran on both volumes, but one disk cannot be compared with itself: SKIP, with the numbers
    load = checks["storage[scratch].service-load-32b"]
    assert load["verdict"] == "SKIP"
    assert load["measured"] is not None
    assert "share block device" in load["condition"]
    assert "weights only (not judged)" in load["condition"]
    assert (
        "the seed names no baseline storage"
        in checks["storage[scratch].checkpoint-save-speedup"]["condition"]
    )
    assert (run / "artifacts/here/g3/storage/nfs/checkpoint.json").is_file()

    # the planted secrets: in no file of the run, the PDF included, read back as bytes
    assert (run / "report.pdf").is_file()
    leaked = [
        str(p.relative_to(run))
        for p in sorted(run.rglob("*"))
        if p.is_file() and (token.encode() in p.read_bytes() or key.encode() in p.read_bytes())
    ]
    assert leaked == [], leaked
    for arm in ("ssd-restore", "recompute", "dram-only", "ssd-tier"):
        env = meta["engines"]["here/tiny"][arm]["env"]
        assert env["HF_TOKEN"] == env["SITE_API_KEY"] == "<redacted>", arm


def test_an_engine_that_cannot_start_is_a_lab_error_with_its_log_not_a_verdict(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inv = inventory(tmp_path, scratch)
    data = yaml.safe_load(inv.read_text())
    data["engines"]["tiny"] |= {"model": "/nonexistent/model.gguf", "state_bytes_per_token": 46708}
    inv.write_text(yaml.safe_dump(data))
    proc = run_g3(tmp_path, inv)

    assert proc.returncode == 3, proc.stderr[-2000:]  # ERROR: the lab prevented evaluation
    (run,) = (tmp_path / "r" / "g3test").glob("g3-*")
    checks = [json.loads(x) for x in (run / "checks.jsonl").read_text().splitlines()]
    measured = [c for c in checks if c["verdict"] != "SKIP"]
    assert {c["verdict"] for c in measured} == {"ERROR"}
    assert "exited during start-up" in measured[0]["condition"]
    assert "/nonexistent/model.gguf" in measured[0]["condition"]  # the engine log's tail says why
    assert list(scratch.iterdir()) == []
    port = data["engines"]["tiny"]["port"]
    left = subprocess.run(
        ["pgrep", "-f", f"llama_cpp.server.*--port {port}"], capture_output=True, text=True, check=False
    )
    assert left.stdout == ""  # stop left nothing behind
