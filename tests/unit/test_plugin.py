"""The pytest plugin, driven by pytester: the gate catalogue lists without side effects, a run records."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from kvgate.configuration.gateconfig import load_config
from kvgate.orchestration.gate_plans import plans
from kvgate.record import write_manifest

pytest_plugins = ["pytester"]
REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "inventory" / "local.yaml"
GATES = {"g1": "g1_arrival", "g2": "g2_baseline", "g3": "g3_main", "g4": "g4_soak", "preflight": "preflight"}


@pytest.mark.parametrize("gate", sorted(GATES))
def test_collect_only_lists_every_planned_check_once_and_writes_nothing(
    pytester: pytest.Pytester, tmp_path: Path, gate: str
) -> None:
    """Before, --collect-only created a run directory, and on G2 refused to list without a passed G1."""
    runs = tmp_path / "runs"
    args = ["--collect-only", "-q", "-p", "no:cacheprovider", f"--rootdir={REPO}", f"--run-dir={runs}"]
    result = pytester.runpytest_subprocess(*args, str(REPO / "gates" / GATES[gate]), f"--inventory={LOCAL}")
    assert result.ret == 0, result.stdout.str()
    found = re.findall(r"::test_\w+\[(.+)\]$", result.stdout.str(), flags=re.M)
    listed = Counter(i for i in found if i != "NOTSET")  # NOTSET: a family with no check here
    config = load_config(LOCAL)
    planned = Counter(c.id for plan in plans(gate) for c in plan(config))
    assert listed == planned  # the families cover the plan: every check once, none lost
    assert not runs.exists()


GATE = """
import pytest
from kvgate.base.errors import LabError
from kvgate.base.criteria import Criterion, Inputs, Measurement
from kvgate.judgement import Check
from kvgate.orchestration.pytest_plugin import expect, family

pytestmark = pytest.mark.gate("g1")
CRIT = Criterion("T-1", "x", ">=", 2, "GB/s")


def plan(config):
    hosts = config.inventory.inventory.hosts
    return [Check(host=h, check=name, criterion=CRIT, spec=None, key="x") for h in hosts
            for name in ("fast", "slow", "down")]


@pytest.fixture
def measured(check):
    if check.check == "down":
        raise LabError("host unreachable")
    return Inputs({"x": Measurement("x", 3.0 if check.check == "fast" else 1.0, "GB/s", ("artifacts/a",))})


@family(plan, "T-*", judged_on="measured")
def test_x(verdict):
    expect(verdict)
"""


def test_a_gate_run_records_every_verdict_with_what_it_was_judged_on(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_gate=GATE)
    runs = tmp_path / "runs"
    args = [
        "-p",
        "kvgate.orchestration.pytest_plugin",
        "-p",
        "no:cacheprovider",
        f"--run-dir={runs}",
        f"--inventory={LOCAL}",
    ]
    result = pytester.runpytest_subprocess(*args, "--force-gate-order=plugin test")
    result.assert_outcomes(passed=1, failed=1, errors=1)  # out of spec FAILED, the lab's failure ERROR
    (run,) = (runs / "local").iterdir()
    lines = [json.loads(line) for line in (run / "checks.jsonl").read_text().splitlines()]
    verdicts = {r["check"]: r["verdict"] for r in lines}
    assert verdicts == {"fast": "PASS", "slow": "FAIL", "down": "ERROR"}
    fast = next(r for r in lines if r["check"] == "fast")
    assert fast["inputs"]["measured"]["x"]["unit"] == "GB/s"
    meta = json.loads((run / "run.json").read_text())
    assert (meta["schema"], meta["status"], meta["forced"][0]["reason"]) == (
        "kvgate.run/2",
        "incomplete",
        "plugin test",
    )
    assert (run / "manifest.json").is_file()  # incomplete: the ERROR check is resumable, never PASS


def test_resume_of_a_run_that_records_no_inventory_is_a_usage_error_naming_run_json(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """run.json without ``inventory`` is a valid record; before, --resume read it as a dict: a KeyError."""
    pytester.makepyfile(test_gate=GATE)
    runs = tmp_path / "runs"
    args = ["-p", "kvgate.orchestration.pytest_plugin", "-p", "no:cacheprovider", f"--inventory={LOCAL}"]
    pytester.runpytest_subprocess(*args, f"--run-dir={runs}", "--force-gate-order=plugin test")
    (run,) = (runs / "local").iterdir()
    meta = json.loads((run / "run.json").read_text())
    del meta["inventory"]
    (run / "run.json").write_text(json.dumps(meta))
    write_manifest(run)  # a record kept so (sealed as such), not an edit: resume refuses an edit first
    result = pytester.runpytest_subprocess(*args, f"--resume={run}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stderr.str()
    assert f"{run / 'run.json'}: records no inventory (inventory.path)" in result.stderr.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
