"""Tampering shows (issue 11): a run edited after the fact is "modified after the run", never a PASS.

Runs are real run directories written by RunStore and closed the way a gate run closes
them; signatures are real OpenSSH signatures (ssh-keygen -Y) with a key made here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kvgate.base.criteria import Verdict
from kvgate.base.errors import ModifiedRun, UsageError
from kvgate.cli.command_line import main
from kvgate.record import JudgementRecord, sign_manifest, verify_manifest, write_manifest
from kvgate.record.gate_order import require_previous
from kvgate.record.manifest import MANIFEST
from kvgate.record.store import RunStore

INVENTORY_SHA = "cd" * 32


def finished_run(root: Path, gate: str = "g1", verdict: Verdict = Verdict.FAIL) -> RunStore:
    meta = {"inventory": {"path": "inventory/lab.yaml", "sha256": INVENTORY_SHA}, "planned": ["h/cpu.cores"]}
    store = RunStore.create(root, site="lab", gate=gate, meta=meta)
    store.artifact("h", "lscpu.json", '{"lscpu": []}')
    store.record(
        JudgementRecord(
            id="h/cpu.cores", host="h", check="cpu.cores", verdict=verdict, condition="cpu_cores=32 ≥ 64"
        )
    )
    store.finish("complete")
    write_manifest(store.path)  # as GateSession.close does at the end of every run
    return store


def forge_pass(store: RunStore) -> None:
    """What a forger with an editor does: the FAIL line becomes a PASS."""
    path = store.path / "checks.jsonl"
    path.write_text(path.read_text().replace('"FAIL"', '"PASS"'))


def test_a_finished_run_verifies_and_an_edited_one_says_which_files_changed(tmp_path: Path) -> None:
    store = finished_run(tmp_path)
    assert verify_manifest(store.path).summary().startswith("every file matches the run's manifest (sha256 ")
    forge_pass(store)
    found = verify_manifest(store.path)
    assert (found.status, found.changed, found.intact) == ("modified after the run", ("checks.jsonl",), False)
    (store.path / "artifacts" / "h" / "lscpu.json").unlink()
    assert "artifacts/h/lscpu.json" in verify_manifest(store.path).changed


def test_a_failed_run_edited_to_pass_renders_modified_and_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = finished_run(tmp_path)
    forge_pass(store)
    code = main(["report", str(store.path), "--no-pdf"])
    assert code == 2  # INVALID: the record cannot be trusted, whatever it now says
    assert "modified after the run: checks.jsonl" in capsys.readouterr().err
    assert "Run record: modified after the run: checks.jsonl" in (store.path / "report.html").read_text()


def test_a_forged_or_edited_earlier_gate_does_not_open_the_next(tmp_path: Path) -> None:
    g1 = finished_run(tmp_path, verdict=Verdict.PASS)
    assert require_previous(tmp_path, site="lab", gate="g2", inventory_sha256=INVENTORY_SHA) is not None
    (g1.path / "run.json").write_text((g1.path / "run.json").read_text().replace('"lab"', '"lab" '))
    with pytest.raises(ModifiedRun, match=r"modified after the run: run\.json"):  # exit 2
        require_previous(tmp_path, site="lab", gate="g2", inventory_sha256=INVENTORY_SHA)
    (g1.path / MANIFEST).unlink()  # a run written by hand (or a forger) has no manifest at all
    with pytest.raises(ModifiedRun, match=r"manifest\.json \(missing, though run\.json says the run ended"):
        require_previous(tmp_path, site="lab", gate="g2", inventory_sha256=INVENTORY_SHA)
    RunStore.open(g1.path).update_meta(status="running")  # cut before its end: not a passed run
    with pytest.raises(UsageError, match="no manifest"):
        require_previous(tmp_path, site="lab", gate="g2", inventory_sha256=INVENTORY_SHA)


@pytest.fixture
def key(tmp_path: Path) -> Path:
    path = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


def test_a_signed_run_names_its_signer_and_its_key_and_an_edit_voids_it(tmp_path: Path, key: Path) -> None:
    store = finished_run(tmp_path / "r")
    signed = sign_manifest(store.path, key=key, identity="jdoe@lab")
    fingerprint = subprocess.run(
        ["ssh-keygen", "-lf", f"{key}.pub"], capture_output=True, text=True, check=True
    ).stdout.split()[1]
    assert signed.intact
    assert f"signed by jdoe@lab ({fingerprint}, key not checked" in signed.summary()
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"jdoe@lab {' '.join(Path(f'{key}.pub').read_text().split()[:2])}\n")
    assert (
        verify_manifest(store.path, allowed_signers=allowed).summary().endswith(f"jdoe@lab ({fingerprint})")
    )
    allowed.write_text(f"someone@else {' '.join(Path(f'{key}.pub').read_text().split()[:2])}\n")
    assert verify_manifest(store.path, allowed_signers=allowed).signature_problem  # not who it says
    forge_pass(store)
    assert verify_manifest(store.path).status == "modified after the run"


def test_a_forger_who_rewrites_the_manifest_cannot_keep_the_signature(tmp_path: Path, key: Path) -> None:
    store = finished_run(tmp_path / "r")
    sign_manifest(store.path, key=key, identity="jdoe@lab")
    forge_pass(store)
    doc = json.loads((store.path / MANIFEST).read_text())
    doc["files"] = {k: v for k, v in doc["files"].items() if k != "checks.jsonl"}  # "recompute" it badly
    (store.path / MANIFEST).write_text(json.dumps(doc))
    found = verify_manifest(store.path)
    assert not found.intact
    write_manifest(store.path)  # or properly: the signature is then gone with the old manifest
    assert (
        verify_manifest(store.path)
        .summary()
        .endswith("not signed, so this shows accidental change only (kvgate sign)")
    )
