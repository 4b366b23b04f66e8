"""Bad input through the real `kvgate` command: exit 4 naming what is wrong, never a traceback or a hang.

Each case gave a traceback, exit 1/2/70, a hang or a gate run on the code before this
file; the exit codes are the README's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kvgate.base.criteria import Verdict
from kvgate.record import JudgementRecord
from kvgate.record.store import RunStore

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)


def kvgate(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "kvgate.cli", *args]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def refused(proc: subprocess.CompletedProcess[str], *expected: str) -> str:
    """Exit 4, each expected text in the (re-wrapped) message, and no traceback."""
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    for text in expected:
        assert text in said, said
    return said


def local_inventory(tmp_path: Path, **extra: object) -> Path:
    (tmp_path / "scratch").mkdir(exist_ok=True)
    data = {
        "site": "cli",
        "hosts": {"here": {"transport": "local", "roles": ["storage-client"]}},
        "volumes": {"v": {"path": str(tmp_path / "scratch"), "kind": "candidate", "scratch": True}},
        **extra,
    }
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_an_unknown_gate_lists_the_gates() -> None:
    refused(kvgate("run", "g9"), "invalid choice: 'g9'", "'g1', 'g2', 'g3', 'g4'")


def test_an_unknown_option_is_a_usage_error_not_gate_invalid() -> None:
    refused(kvgate("run", "g1", "--bogus"), "unrecognized arguments: --bogus")


def test_a_bad_k_expression_stops_before_the_run(tmp_path: Path) -> None:
    results = tmp_path / "r"
    refused(
        kvgate(
            "run",
            "g1",
            "--inventory",
            str(local_inventory(tmp_path)),
            "--results",
            str(results),
            "-k",
            "volume and (",
        ),
        "-k 'volume and ('",
        "not a pytest -k expression",
    )
    assert not (results / "cli").exists()  # no run directory was created for a run that cannot start


@pytest.mark.parametrize("kind", ["file", "proc"])
def test_a_results_path_that_cannot_hold_runs_is_named(tmp_path: Path, kind: str) -> None:
    results = {"file": tmp_path / "a-file", "proc": Path("/proc/self")}[kind]
    (tmp_path / "a-file").write_text("")
    proc = kvgate("run", "g1", "--inventory", str(local_inventory(tmp_path)), "--results", str(results))
    refused(proc, f"--results {results}:")


@pytest.mark.parametrize("kind", ["no-directory", "a-directory"])
def test_a_capture_output_that_cannot_be_written_is_named_before_the_host_is_reached(
    tmp_path: Path, kind: str
) -> None:
    out = {"no-directory": tmp_path / "nope" / "x.yaml", "a-directory": tmp_path}[kind]
    proc = kvgate(
        "inventory", "capture", "here", "--inventory", str(local_inventory(tmp_path)), "-o", str(out)
    )
    refused(proc, f"-o {out}:")


def test_an_inventory_that_plans_no_checks_says_what_the_gate_needs(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(yaml.safe_dump({"site": "cli", "hosts": {"here": {"transport": "local"}}}))
    proc = kvgate(
        "run", "g2", "--inventory", str(inv), "--results", str(tmp_path / "r"), "--force-gate-order", "test"
    )
    refused(proc, f"{inv} plans no g2 checks", "g2 needs a volume mounted on a host")


def test_inventory_check_of_a_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "inv.yaml"
    os.mkfifo(fifo)
    refused(
        kvgate("inventory", "check", str(fifo), timeout=30), f"{fifo}: expected a regular file, got a FIFO"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "site: s\nhosts:\n  h1: {}\n  h1: {address: b}\n",
            "hosts.h1 (line 4): duplicate key 'h1' (first on line 3)",
        ),
        ("site: s\nhosts:\n  'h[/x]': {}\n", "hosts.h[/x].[key]: String should match pattern"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"a{i}: &a{i} [{', '.join(['*a' if i == 1 else f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
            )
            + "site: s\nhosts: {h1: {roles: *a8}}\n",
            "expands to more than 100000 values",
        ),
        (
            "site: s\nhosts:\n  h1: {address: 10.0.0.1, connect_timeout_s: .inf}\n",
            "hosts.h1.connect_timeout_s (line 3): '.inf' is not a finite number",
        ),
    ],
    ids=["duplicate-host", "markup-in-a-name", "alias-bomb", "infinite-timeout"],
)
def test_inventory_check_and_run_refuse_a_hostile_inventory(tmp_path: Path, text: str, expected: str) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(text)
    refused(kvgate("inventory", "check", str(inv), timeout=30), str(inv), expected)
    refused(
        kvgate("run", "g1", "--inventory", str(inv), "--results", str(tmp_path / "r"), timeout=30), expected
    )


RECORD = '{"id": "here/x", "host": "here", "check": "x", "verdict": "PASS"}'


def stored_run(tmp_path: Path) -> RunStore:
    """A finished G1 run of one check, written by kvgate's own store."""
    inv = local_inventory(tmp_path)
    meta = {"inventory": {"path": str(inv), "sha256": "x"}, "planned": ["here/cpu.model"]}
    store = RunStore.create(tmp_path / "r", site="cli", gate="g1", meta=meta)
    store.record(
        JudgementRecord(
            id="here/cpu.model", host="here", check="cpu.model", verdict=Verdict.PASS, condition="c"
        )
    )
    store.save_facts("here", {"cpu": {}})
    store.finish("complete")
    return store


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("checks.jsonl", "{]\n" + RECORD + "\n", "line 1: not valid JSON"),
        (
            "checks.jsonl",
            RECORD.replace("}", ', "tolerance": "5%"}') + "\n",
            "line 1: tolerance: Input should be a valid number",
        ),
        (
            "run.json",
            '{"schema": "kvgate.run/2", "gate": "g1", "site": "cli", "status": "complete", '
            '"hosts": {"here": {"roles": "gpu-node"}}}',
            "hosts.here.roles: Input should be a valid list",
        ),
        ("facts/here.json", '{"cpu": {"model": "EPYC"', "not valid JSON"),
        ("checks.jsonl", RECORD.replace("here", "[/x]") + "\n", "line 1: host: String should match pattern"),
    ],
    ids=["checks-garbage-line", "checks-wrong-type", "run-json-wrong-type", "facts-truncated", "markup-host"],
)
def test_report_and_resume_of_an_edited_run_name_the_file(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    store = stored_run(tmp_path)
    (store.path / name).write_text(content)
    refused(kvgate("report", str(store.path), "--no-pdf"), f"{store.path / name}: ", expected)
    resumed = kvgate("run", "g1", "--resume", str(store.path), "--no-pdf")
    refused(resumed, f"{store.path / name}: ", expected)


def test_a_run_that_still_reads_is_re_rendered(tmp_path: Path) -> None:
    store = stored_run(tmp_path)
    with open(store.path / "checks.jsonl", "a") as f:
        f.write('{"id": "here/x", "verd')  # a crash mid-write: the last line, without its newline
    proc = kvgate("report", str(store.path), "--no-pdf")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((store.path / "run.json").read_text())["status"] == "complete"
