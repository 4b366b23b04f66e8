"""G4 on the lab: an engine soaks on the NVMe-oF head through its optimized path's loss and return.

`kvgate run g4` on inventory/lab-vm.yaml with an engine deployment added, as a site would add one:
llama-cpp-disk-lab (llama.cpp in podman on the client guest) with its disk tier on the candidate
volume, the array's namespace 1 through the client's native multipath head, and G4's lab profile
(workloads/g4/lab.yaml: TCG serves a prompt token a second). Once the soak has stored a window, the
array stops serving port 1 — namespace 1's only ANA-optimized path — for half a minute and then
serves it again (issue 26's fault matrix). What must hold: the soak continues (every window pulled,
in order, no request failed, the canary's output unchanged), G4's integrity load beside the engine
reads every byte back, and the flap is in the report, judged by the profile's rule (no path change
and no storage line in the kernel log allowed: FAIL, the gate FAILs).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from labfixture import lab_vm  # noqa: F401 (the session fixture `lab`)
from labkvgate import INVENTORY, with_engine
from test_lab_g1 import port_ctrl_state, port_down

from kvgate.probes.engines.model_staging import MODEL_CACHE
from kvgate.probes.engines.tinymodel import ensure_tiny_gguf

pytestmark = pytest.mark.timeout(2400)  # the engine's site (~6 min when not built yet), then the soak
DEPLOYMENT = "tiny"
WINDOWS = f"lab-vm/g4-*/artifacts/lab-client/g4/{DEPLOYMENT}/windows/w*.json"


def engine_inventory(tmp_path: Path) -> Path:
    """lab-vm.yaml with the client as an engine host and one deployment on the candidate volume."""
    inv = yaml.safe_load(INVENTORY.read_text())
    inv["hosts"]["lab-client"]["roles"] = ["storage-client", "engine"]
    inv["engines"] = {
        DEPLOYMENT: {
            "tier_profile": "llama-cpp-disk-lab",
            "recompute_profile": "llama-cpp-recompute-lab",
            "volume": "array",
            "model": "tiny",
            "port": 18300,
        }
    }
    inv["g4_profile"] = "lab"
    path = tmp_path / "lab-vm-engine.yaml"
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


def stored_windows(results: Path) -> list[int]:
    return sorted(int(p.stem[1:]) for p in results.glob(WINDOWS))


def await_window(results: Path, gate: subprocess.Popen[str], index: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not [i for i in stored_windows(results) if i >= index]:
        assert gate.poll() is None, gate.communicate()
        assert time.monotonic() < deadline, f"no soak window {index} within {seconds:.0f} s"
        time.sleep(2)


def checks_of(run: Path) -> dict[str, dict[str, Any]]:
    """checks.jsonl's judged rows by check key (lab-client/soak[tiny].<key>)."""
    rows = map(json.loads, (run / "checks.jsonl").read_text().splitlines())
    prefix = f"lab-client/soak[{DEPLOYMENT}]."
    return {r["id"].removeprefix(prefix): r for r in rows if r.get("verdict") and r["id"].startswith(prefix)}


def test_an_engine_soaks_through_its_optimized_path_down_and_back_and_loses_nothing(
    lab: dict[str, object], tmp_path: Path
) -> None:
    with_engine({})  # kvgate stages the tiny model itself, as on any site
    results = tmp_path / "results"
    cmd = [sys.executable, "-m", "kvgate.cli", "run", "g4", "--inventory", str(engine_inventory(tmp_path))]
    cmd += ["--results", str(results), "--force-gate-order", "the lab soak test: no G3 on the lab"]
    gate = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        await_window(results, gate, 1, seconds=1200)  # the engine's start under TCG, then a window
        down_at = time.monotonic()
        with port_down(1):  # namespace 1's only ANA-optimized path
            await_window(results, gate, max(stored_windows(results)) + 1, seconds=300)
            during = port_ctrl_state(1)
            time.sleep(max(0.0, 30 - (time.monotonic() - down_at)))
        down_s = time.monotonic() - down_at
        out, err = gate.communicate(timeout=1200)
    finally:
        if gate.poll() is None:
            gate.kill()
            gate.communicate()
    (run,) = [p.parent for p in results.glob("lab-vm/g4-*/run.json")]
    weights = ensure_tiny_gguf(MODEL_CACHE).stat().st_size
    checks = checks_of(run)
    shown = err[-3000:] + json.dumps({k: c["condition"] for k, c in checks.items()}, indent=1)
    jsonl = run / f"artifacts/lab-client/g4/{DEPLOYMENT}/windows.jsonl"
    windows = [json.loads(w) for w in jsonl.read_text().splitlines()]
    verdicts = {k: c["verdict"] for k, c in checks.items()}
    print(
        f"\nengine soak through a path flap: port 1 down {down_s:.0f} s ({during} meanwhile); "
        f"{len(windows)} windows; exit {gate.returncode}; {json.dumps(verdicts)}\n"
        f"paths: {checks['paths']['condition']}\nkernel log: {checks['kernel-log']['condition']}\n"
        f"integrity: {checks['integrity-reads']['condition']}; engine memory (KiB) "
        f"{[(w['rss_kib'], w['processes']) for w in windows]} for a {weights} B model; engine reads (B) "
        f"{[w['engine_read_bytes'] for w in windows]}, the device's "
        f"{[w['device_read_bytes'] for w in windows]}"
    )
    assert during != "live"  # a window ran while the optimized path was down
    # the soak continued: every window pulled once, in order, past the flap; no request failed
    assert [w["index"] for w in windows] == list(range(len(windows))), shown
    assert len(windows) >= 3, shown  # the profile's warm-up and baselines; 4 on an idle machine
    # the engine's memory is its container's (the model's weights mapped), not `podman run`'s client
    assert all(w["rss_kib"] * 1024 >= 0.9 * weights for w in windows), shown
    for key in ("coverage", "failed-requests", "empty-responses", "engines-up", "canary", "integrity-reads"):
        assert verdicts[key] == "PASS", f"{key}: {shown}"
    # the flap, judged by the profile's rule: the lab profile (as smoke) allows no path change
    assert verdicts["paths"] == "FAIL", shown
    assert verdicts["kernel-log"] == "FAIL", shown  # the kernel logged the path's loss and return
    assert gate.returncode == 1, shown
    report = (run / "report.html").read_text()
    assert "path" in report
    assert list(results.glob("lab-vm/g4-*/report.pdf")), out[-2000:]
