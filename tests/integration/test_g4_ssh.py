"""G4 over real SSH with a real engine: the controller may die or detach, --resume reattaches.

`kvgate run g4` (smoke: 120 s in 20-s windows) starts the llama.cpp engine and the soak
on a loopback sshd host. The controller is SIGKILLed after a window, three times, each
time restarted with `--resume RUN`: the soak and its engine run on, the last controller
collects every window once and judges them (issue 26's fault matrix). Ctrl-C (SIGINT)
detaches promptly (5), and `kvgate stop RUN` then ends the soak."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from gate_cli import CLI_ENV, after_ctrl_c, run_cli
from llama_marks import LLAMA_ENGINE
from ports import free_port_pair
from sshd import SSHServer
from test_g3_ssh import host_entry

from kvgate.probes.agent.soak_sample import group_pids
from kvgate.report.model import load_run

REPO = Path(__file__).resolve().parents[2]
pytestmark = [*LLAMA_ENGINE, pytest.mark.timeout(600)]


BASE = [sys.executable, "-m", "kvgate.cli"]
RUN_G4 = [*BASE, "run", "g4", "--no-pdf"]


def kvgate(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli([*BASE, *args], timeout_s=480)


def launch(tmp_path: Path, host: SSHServer, known_hosts: Path) -> subprocess.Popen[str]:
    """`kvgate run g4` on a llama.cpp deployment (its run goes to tmp_path/r/g4ssh)."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inv = tmp_path / "inv.yaml"
    dep = {
        "hosts": ["node-a"],
        "tier_profile": "llama-cpp-disk",
        "recompute_profile": "llama-cpp-recompute",
        "volume": "scratch",
        "port": free_port_pair(),
        "python": sys.executable,
    }
    inv.write_text(
        yaml.safe_dump(
            {
                "site": "g4ssh",
                "scale": "smoke",
                "hosts": {"node-a": host_entry(host, known_hosts)},
                "volumes": {"scratch": {"path": str(scratch), "kind": "candidate", "scratch": True}},
                "engines": {"tiny": dep},
            }
        )
    )
    cmd = [*RUN_G4, "--inventory", str(inv), "--results", str(tmp_path / "r"), "--force-gate-order", "test"]
    return subprocess.Popen(
        cmd, cwd=REPO, env=CLI_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def await_window(results: Path, gate: subprocess.Popen[str], index: int) -> None:
    """Until the controller ``gate`` stored window ``index`` (or a later one) of the soak."""
    deadline = time.monotonic() + 240
    pattern = "g4ssh/g4-*/artifacts/node-a/g4/tiny/windows/w*.json"
    while not [p for p in results.glob(pattern) if int(p.stem[1:]) >= index]:
        assert gate.poll() is None, gate.communicate()
        assert time.monotonic() < deadline, f"no soak window {index} within 240 s"
        time.sleep(0.5)


def start_and_detach(tmp_path: Path, host: SSHServer, known_hosts: Path) -> tuple[Path, dict[str, Any]]:
    """`kvgate run g4` on a llama.cpp deployment, Ctrl-C after its first window: the run and its job."""
    gate = launch(tmp_path, host, known_hosts)
    await_window(tmp_path / "r", gate, 0)
    gate.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = after_ctrl_c(gate, 120)
    (run,) = (tmp_path / "r" / "g4ssh").glob("g4-*")
    meta = json.loads((run / "run.json").read_text())

    assert time.monotonic() - sent < 30, "Ctrl-C must not wait for the soak"
    assert gate.returncode == 5, err
    assert meta["status"] == "interrupted"
    (engine,) = meta["g4_jobs"]["node-a/tiny"]["engines"]
    assert group_pids(engine["pid"]), "detaching must leave the soak and its engine running"
    return run, meta


def verdicts_of(run: Path) -> tuple[dict[str, str], str]:
    """The final verdict per check (soak[tiny].<key>) and every condition, to show on failure."""
    lines = map(json.loads, (run / "checks.jsonl").read_text().splitlines())
    checks = {c["id"].removeprefix("node-a/soak[tiny]."): c for c in lines if c.get("verdict")}
    shown = json.dumps({k: c["condition"] for k, c in checks.items()}, indent=1)
    return {k: c["verdict"] for k, c in checks.items()}, shown


def kill_three_times(tmp_path: Path, host: SSHServer, known_hosts: Path) -> tuple[Path, list[float]]:
    """`kvgate run g4`, SIGKILLed after a window, then `--resume`d and SIGKILLed after a later one, thrice.

    The run and, for each restart, the seconds until it stored a window the killed one had not.
    """
    results = tmp_path / "r"
    gate = launch(tmp_path, host, known_hosts)
    caught_up: list[float] = []
    for kill in range(3):
        await_window(results, gate, kill)
        gate.kill()  # SIGKILL: no handler runs, nothing is flushed or marked
        gate.communicate()
        (run,) = (results / "g4ssh").glob("g4-*")
        if kill < 2:
            gate = subprocess.Popen(
                [*RUN_G4, "--resume", str(run)],
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            started = time.monotonic()
            await_window(results, gate, kill + 1)
            caught_up.append(time.monotonic() - started)
    return run, caught_up


@pytest.mark.timeout(900)  # four controllers' starts on top of the soak; a busy machine's windows overrun
def test_a_controller_sigkilled_three_times_loses_no_window_and_resume_judges_it(
    tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer], known_hosts: Path
) -> None:
    """The soak runs on on its host through three controller deaths; the last --resume judges it all,
    with the verdicts an undisturbed run of this deployment gets (asserted below, check by check)."""
    run, caught_up = kill_three_times(tmp_path, sshd_pair[0], known_hosts)
    meta = json.loads((run / "run.json").read_text())
    (engine,) = meta["g4_jobs"]["node-a/tiny"]["engines"]
    assert group_pids(engine["pid"]), "the soak and its engine run on without their controller"

    resumed = kvgate("run", "g4", "--no-pdf", "--resume", str(run))  # the inventory: the run's own
    verdicts, conditions = verdicts_of(run)
    shown = resumed.stderr[-3000:] + conditions
    after = json.loads((run / "run.json").read_text())
    assert after["g4_jobs"] == meta["g4_jobs"], "the resumed run follows the same job and engine"
    assert len(after["resumes"]) == 3
    # judged from the restores llama.cpp's log names: whether the tier kept serving is the engine's doing
    # over a 2-minute soak, not this test's (0.81 here on an idle machine)
    hits = verdicts.pop("hit-retention")
    assert hits in ("PASS", "FAIL"), shown
    # a 2-minute soak cannot establish an hourly slope: shown, not judged (min_slope_span_s)
    drifts = [verdicts.pop(d) for d in ("ttft-drift", "throughput-retention", "memory-growth", "tier-growth")]
    assert set(drifts) == {"SKIP"}, shown
    for health in [k for k in verdicts if k.startswith(("nvme-", "nic-")) or k == "paths"]:
        assert verdicts.pop(health) == "SKIP", shown  # no NVMe, NIC counters or NVMe-oF paths here
    assert set(verdicts.values()) == {"PASS"}, shown  # integrity and the kernel log among them
    assert {"integrity", "integrity-reads", "kernel-log"} <= set(verdicts), shown
    assert resumed.returncode == (0 if hits == "PASS" else 1), shown
    windows = (run / "artifacts/node-a/g4/tiny/windows.jsonl").read_text().splitlines()
    print(
        f"\n3 controller SIGKILLs; restarts stored a new window after {[round(s) for s in caught_up]} s; "
        f"{len(windows)} windows, verdicts {sorted(set(verdicts.values()))}"
    )
    assert len(windows) >= 5  # the windows of all four controllers, each once
    assert [json.loads(w)["index"] for w in windows] == list(range(len(windows)))
    soak = {s.title: s.data for s in load_run(run).sections}["G4 soak windows"]  # laid out from the record
    assert [r[1] for r in soak["rows"]] == ["0 (warm-up)"] + [str(i) for i in range(1, len(windows))]
    assert f"node-a/tiny: {len(windows)} window(s), ended by " in soak["note"]
    assert after["status"] == "complete"
    assert group_pids(engine["pid"]) == []  # one engine all along (its own process group), and it is gone
    assert list((tmp_path / "scratch").iterdir()) == []


def test_stop_ends_a_detached_soak_and_resume_judges_it_short(
    tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer], known_hosts: Path
) -> None:
    run, meta = start_and_detach(tmp_path, sshd_pair[0], known_hosts)
    (engine,) = meta["g4_jobs"]["node-a/tiny"]["engines"]

    stopped = kvgate("stop", str(run))
    assert stopped.returncode == 0, stopped.stderr
    assert "node-a/tiny: soak stopped" in stopped.stderr
    assert group_pids(engine["pid"]) == []  # the agent stopped its engine before it exited

    resumed = kvgate("run", "g4", "--no-pdf", "--resume", str(run))
    verdicts, shown = verdicts_of(run)
    assert resumed.returncode == 1, resumed.stderr[-3000:] + shown
    assert verdicts["coverage"] == "FAIL", shown  # a shortened soak is not a passed one
    assert "the soak ended: cancelled" in shown
    assert list((tmp_path / "scratch").iterdir()) == []
    again = kvgate("stop", str(run))
    assert again.returncode == 0
    assert "had already ended" in again.stderr
