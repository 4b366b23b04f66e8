"""kvgate rejudge on a real stored G3 run: a threshold or a waiver decided after the run, nothing measured.

The run under tests/data/runs/hma1 is a smoke G3 run made on this machine (llama.cpp, two
engine instances) by kvgate before the typed record, put in today's schema by to_run2.py beside it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kvgate.base.criteria import Verdict
from kvgate.cli.command_line import main
from kvgate.cli.rejudge import rejudge
from kvgate.configuration import gateconfig
from kvgate.configuration.gate_profiles.g3 import G3Profile, load_g3_profile
from kvgate.record.manifest import verify_manifest
from kvgate.record.store import RunStore
from kvgate.report.model import load_run

DATA = Path(__file__).resolve().parents[1] / "data" / "runs" / "hma1"
RUN = DATA / "g3-20261205T023051Z"
WROTE = "here/engine[tiny].ssd-restore.write-through"  # stored: 1.0065 ≥ 0.9 (G3-KV-1), PASS
WHOLE = "here/engine[tiny].throughput-gain-whole-machine"  # stored: INVALID (an untrusted trial)
# planned differently since this run: SKIP on an engine that serves one request at a time (batched gains),
# and R2/R3 now compare the tier on a baseline volume, which this run's inventory does not name
REPLANNED = {f"here/engine[tiny].throughput-gain-{x}" for x in ("conc8", "conc16", "whole-machine")} | {
    "here/engine[tiny].ttft-p50-reduction"
}


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    return shutil.copytree(RUN, tmp_path / "runs" / "hma1" / RUN.name)


def stricter(min_ratio: float) -> Any:
    """load_g3_profile, as the run's configuration reads it, with the write-through held to ``min_ratio``."""

    def load(scale: str) -> G3Profile:
        p = load_g3_profile(scale)
        return p.model_copy(
            update={"write_through": p.write_through.model_copy(update={"min_ratio": min_ratio})}
        )

    return load


def test_a_stricter_threshold_decided_after_the_run_is_judged_on_the_stored_numbers(
    stored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gateconfig, "load_g3_profile", stricter(1.05))  # the site's 1.0065 fails
    new = rejudge(stored, inventory=DATA / "inv.yaml", results=tmp_path / "out")
    checks = new.checks()
    assert checks[WROTE].verdict == Verdict.FAIL
    assert checks[WROTE].measured == pytest.approx(1.00649, abs=1e-4)  # the stored value, not a new one
    assert "≥ 1.05" in checks[WROTE].condition
    done = new.run_record().rejudged
    assert done is not None
    assert done.run == str(stored)
    assert done.run_schema == "kvgate.run/2"
    assert f"{WROTE}: PASS → FAIL" in done.changes
    assert any(c.startswith(f"{WROTE}: criterion ≥ 0.9 x → ≥ 1.05 x") for c in done.changes)
    assert f"{WHOLE}: INVALID → SKIP" in done.changes  # today's gate plan, applied without measuring
    assert (verify_manifest(stored).status, verify_manifest(new.path).status) == ("verified", "verified")
    view = load_run(new.path)
    assert view.verdict is Verdict.FAIL
    shown = dict(view.run_record())
    assert shown["Re-judged from"].startswith(f"{stored} (kvgate.run/2, manifest sha256 ")
    assert f"{WROTE}: PASS → FAIL" in shown["Changes"]
    assert (new.path / "artifacts" / "here" / "g3" / "tiny" / "arms.json").is_file()  # the evidence, linked


def test_a_waiver_decided_after_the_run_waives_without_measuring(
    stored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gateconfig, "load_g3_profile", stricter(1.05))  # the write-through now FAILs ...
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(
        "waivers:\n  - rule: G3-KV-1\n"  # ... and a waiver decided after the run accepts it
        "    reason: a shared 2-core VM; the lab run decides\n    approver: J. Doe\n"
    )
    new = rejudge(stored, inventory=DATA / "inv.yaml", waivers=waivers, results=tmp_path / "out")
    checks = new.checks()
    assert checks[WROTE].verdict == Verdict.WAIVED
    assert (checks[WROTE].waiver or {}).get("was") == "FAIL"
    assert load_run(new.path).verdict is Verdict.WAIVED  # the gate passes, with its waiver shown


def test_rejudge_from_the_cli_refuses_a_changed_inventory_and_an_edited_run(
    stored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = tmp_path / "inv.yaml"
    edited.write_text((DATA / "inv.yaml").read_text().replace("instances: 2", "instances: 3"))
    assert main(["rejudge", str(stored), "--inventory", str(edited), "--no-pdf"]) == 4
    assert "changed since run g3-20261205T023051Z" in capsys.readouterr().err
    line = json.loads((stored / "checks.jsonl").read_text().splitlines()[3])
    (stored / "checks.jsonl").write_text(json.dumps(line | {"measured": 99.0}) + "\n")
    assert main(["rejudge", str(stored), "--inventory", str(DATA / "inv.yaml"), "--no-pdf"]) == 2  # modified
    assert "modified after the run" in capsys.readouterr().err
    assert len(list((tmp_path / "runs" / "hma1").iterdir())) == 1  # nothing written


G1_V2 = Path(__file__).resolve().parents[1] / "data" / "runs" / "local-v2"


@pytest.mark.parametrize(
    ("run", "inventory"), [(RUN, DATA / "inv.yaml"), (next(G1_V2.glob("g1-*")), G1_V2 / "inv.yaml")]
)
def test_with_nothing_changed_every_verdict_stands(tmp_path: Path, run: Path, inventory: Path) -> None:
    """A G3 run (its stored inputs) and a G1 run (its facts), judged as they were."""
    copy = shutil.copytree(run, tmp_path / "runs" / "site" / run.name)
    new = rejudge(copy, inventory=inventory, results=tmp_path / "out")
    before, after = RunStore.open(copy).checks(), new.checks()
    replanned = REPLANNED if run == RUN else set()
    assert {k: r.verdict for k, r in after.items() if k not in replanned} == {
        k: r.verdict for k, r in before.items() if k not in replanned
    }
    assert {after[k].verdict for k in replanned} <= {Verdict.SKIP}
    done = new.run_record().rejudged
    assert done is not None
    # references.yaml gained its rows' bindings to the source reports since these runs: said, not a verdict
    kept = ("references ", *replanned)
    assert [c for c in done.changes if not c.startswith(kept)] == []


def test_the_rejudged_run_records_the_configuration_files_it_was_judged_with(
    tmp_path: Path, stored: Path
) -> None:
    new = rejudge(stored, inventory=DATA / "inv.yaml", results=tmp_path / "out")
    record = new.run_record()
    files = record.configuration.files
    assert record.inventory is not None
    assert files["inventory"].sha256 == record.inventory.sha256  # the inventory the run ran with
    assert files["g3"].path.endswith("workloads/g3/smoke.yaml")
    assert record.configuration.references == files["references"]
