"""G3 over real SSH: two engine hosts (loopback sshd servers), one load generator per side.

`kvgate run g3` reaches both hosts through paramiko: the tiny model, the agent and the
load generator are shipped there, the llama.cpp engines start, restart and stop over
SSH, and the cold restore is proven by the host's own counters. node-a runs the load
generator on the engine host (the default); node-b's deployment says
`loadgen: controller`, so its requests come from this control node to the host's
address, and the engines listen on every address of their host.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from gate_cli import run_cli
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair
from sshd import SSHServer

REPO = Path(__file__).resolve().parents[2]
pytestmark = LLAMA_ENGINE


def host_entry(server: SSHServer, known_hosts: Path) -> dict[str, Any]:
    return {
        "address": "127.0.0.1",
        "port": server.port,
        "user": "root",
        "key_file": str(server.client_key),
        "known_hosts": str(known_hosts),
        "sudo": True,
        "roles": ["engine", "storage-client"],
    }


def deployment(host: str, loadgen: str) -> dict[str, Any]:
    return {
        "hosts": [host],
        "tier_profile": "llama-cpp-disk",
        "recompute_profile": "llama-cpp-recompute",
        "volume": "scratch",
        "port": free_port_pair(),
        "python": sys.executable,
        "loadgen": loadgen,
        "capacity_figure": False,  # the transport and the load generator's side are what this test is about
    }


def test_g3_over_ssh_with_the_load_generator_on_either_side(
    tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer], known_hosts: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    a, b = sshd_pair
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        yaml.safe_dump(
            {
                "site": "g3ssh",
                "scale": "smoke",
                "hosts": {"node-a": host_entry(a, known_hosts), "node-b": host_entry(b, known_hosts)},
                "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
                "engines": {
                    "on-host": deployment("node-a", "host"),
                    "on-ctl": deployment("node-b", "controller"),
                },
            }
        )
    )
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
        "--force-gate-order",
        "test: G2 runs elsewhere",
    ]
    proc = run_cli(cmd, timeout_s=1500)

    (run,) = (tmp_path / "r" / "g3ssh").glob("g3-*")
    checks = {c["id"]: c for c in map(json.loads, (run / "checks.jsonl").read_text().splitlines())}
    shown = proc.stderr[-3000:] + json.dumps({k: c["condition"] for k, c in checks.items()}, indent=1)
    for host, dep in (("node-a", "on-host"), ("node-b", "on-ctl")):
        for evidence in ("write-through", "cold-proof", "correctness"):
            assert checks[f"{host}/engine[{dep}].ssd-restore.{evidence}"]["verdict"] == "PASS", shown
        r2 = checks[f"{host}/engine[{dep}].ttft-p50-reduction"]  # R2 compares volumes: none named here
        assert r2["verdict"] == "SKIP", shown
        assert "names no baseline volume" in r2["condition"], shown
        arms = json.loads((run / f"artifacts/{host}/g3/{dep}/arms.json").read_text())
        restore = arms["arms"]["ssd-restore"]
        assert restore["device_read_bytes_p50"] >= 0.9 * restore["predicted_bytes_p50"], shown
        assert restore["ttft_p50_s"] < arms["arms"]["recompute"]["ttft_p50_s"]
        side = "host" if dep == "on-host" else "controller"
        assert arms["loadgen"] == {"side": side, "address": "127.0.0.1"}
    assert proc.returncode in (0, 1), shown

    # the controller-side deployment's engines listened on every address, its requests came from here
    meta = json.loads((run / "run.json").read_text())
    ctl_argv = meta["engines"]["node-b/on-ctl"]["ssd-restore"]["argv"]
    host_argv = meta["engines"]["node-a/on-host"]["ssd-restore"]["argv"]
    assert ctl_argv[ctl_argv.index("--host") + 1] == "0.0.0.0"
    assert host_argv[host_argv.index("--host") + 1] == "127.0.0.1"
    html = (run / "report.html").read_text().replace("<wbr>", "")  # <wbr>: where a line may wrap
    assert "control node" in html
    assert "capacity_figure: false" in html  # the capacity arms did not run, and the report says so
    assert list(scratch.iterdir()) == []  # G3 removed its own directories on both hosts
