"""A secret planted in the inventory reaches no file of a real G3 run (llama.cpp on the tiny model).

The instance's environment carries a Hugging Face token (a known shape) and a key
that only its name (``SITE_API_KEY``) marks as secret. Before, both were stored in
run.json, in the engines' records (on a vLLM deployment in engine-load.json too; the
record is the same, see tests/unit/test_redact.py). Every file of the run directory,
the PDF included, is read back as bytes.
"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import Any

import yaml
from gate_cli import run_cli
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair

REPO = Path(__file__).resolve().parents[2]
pytestmark = LLAMA_ENGINE


def test_a_planted_token_appears_in_no_file_of_the_run(tmp_path: Path) -> None:
    token, key = "hf_" + secrets.token_hex(17), "plain-" + secrets.token_hex(8)
    scratch, baseline = tmp_path / "scratch", tmp_path / "nfs"
    scratch.mkdir()
    baseline.mkdir()
    tiny = {
        "tier_profile": "llama-cpp-disk",
        "recompute_profile": "llama-cpp-recompute",
        "volume": "scratch",
        "port": free_port_pair(1),
        "instances": [{"HF_TOKEN": token, "SITE_API_KEY": key}],
    }
    data: dict[str, Any] = {
        "site": "redact",
        "scale": "smoke",
        "hosts": {"here": {"transport": "local", "sudo": True, "roles": ["engine", "storage-client"]}},
        "volumes": {
            "scratch": {"path": str(scratch), "kind": "candidate", "scratch": True},
            "nfs": {"path": str(baseline), "kind": "baseline", "scratch": True},
        },
        "engines": {"tiny": tiny},
    }
    (tmp_path / "inv.yaml").write_text(yaml.safe_dump(data))
    cmd = [
        sys.executable,
        "-m",
        "kvgate.cli",
        "run",
        "g3",
        "--inventory",
        str(tmp_path / "inv.yaml"),
        "--results",
        str(tmp_path / "r"),
        "--force-gate-order",
        "test: redaction",
    ]
    proc = run_cli(cmd, timeout_s=1500)

    (run,) = (tmp_path / "r" / "redact").glob("g3-*")
    assert (run / "report.pdf").is_file(), proc.stderr[-2000:]
    leaked = [
        str(p.relative_to(run))
        for p in sorted(run.rglob("*"))
        if p.is_file() and (token.encode() in p.read_bytes() or key.encode() in p.read_bytes())
    ]
    assert leaked == [], leaked
    engines = json.loads((run / "run.json").read_text())["engines"]["here/tiny"]
    assert (
        engines["ssd-restore"]["env"]["HF_TOKEN"]
        == engines["recompute"]["env"]["SITE_API_KEY"]
        == "<redacted>"
    )
