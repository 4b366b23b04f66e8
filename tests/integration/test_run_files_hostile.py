"""Planted links, FIFOs, odd files and prompts in and around a real run: a clear error, never a hang,
a write outside the results root or an internal error (issue 23 items 3, 5, 6 and 7).

Each case wrote through a link, hung, exited 70 or was accepted on the code before this file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.sealed_g1 import copy_of, g1_inventory, g1_run, kvgate, said

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return g1_run(tmp_path_factory.mktemp("g1"), threads=1, code=0)


@pytest.fixture
def run(sealed: Path, tmp_path: Path) -> Path:
    return copy_of(sealed, tmp_path)


@pytest.mark.parametrize("name", ["manifest.json", "manifest.json.sig"])
def test_a_fifo_at_the_manifest_or_its_signature_does_not_hang_report(run: Path, name: str) -> None:
    (run / name).unlink(missing_ok=True)
    os.mkfifo(run / name)
    expected = "modified after the run: manifest.json" if name == "manifest.json" else "got a FIFO"
    said(kvgate("report", str(run), "--no-pdf", timeout=60), 2, expected)


@pytest.mark.parametrize(
    ("kind", "expected"), [("dir", "expected a regular file, got a directory"), ("bytes", "not UTF-8 text")]
)
def test_a_signature_that_is_a_directory_or_not_text_is_named(run: Path, kind: str, expected: str) -> None:
    sig = run / "manifest.json.sig"
    sig.mkdir() if kind == "dir" else sig.write_bytes(b"\xff\xfe# kvgate signer")
    said(kvgate("report", str(run), "--no-pdf"), 2, f"manifest.json.sig: {expected}")


def test_report_sha256_that_is_not_text_is_named(run: Path) -> None:
    (run / "report.sha256").write_bytes(b"\xff  report.html\n")
    said(kvgate("verify-report", str(run / "junit.xml")), 4, f"{run / 'report.sha256'}: not UTF-8 text")


def test_report_html_that_is_a_directory_is_named(run: Path) -> None:
    (run / "report.html").unlink()
    (run / "report.html").mkdir()
    said(kvgate("report", str(run), "--no-pdf"), 4, f"{run / 'report.html'}: cannot write (Is a directory)")


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` read-only even for root (the immutable attribute), else by its mode."""
    root = os.geteuid() == 0
    subprocess.run(["chattr", "+i", str(path)], check=True) if root else path.chmod(0o555)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True) if root else path.chmod(0o755)


def test_a_read_only_run_directory_is_named(run: Path) -> None:
    with read_only(run):
        said(kvgate("report", str(run), "--no-pdf"), 4, f"{run / 'report.html'}: cannot write")


def test_a_run_cut_short_does_not_resume_through_a_planted_link(run: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (run / "manifest.json").unlink()  # as a killed run leaves it: no manifest, status running
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(meta | {"status": "running"}))
    shutil.rmtree(run / "facts")
    (run / "facts").symlink_to(outside)
    (run / "checks.jsonl").write_text("")  # every check runs again and saves its facts
    inventory = g1_inventory(tmp_path, threads=1)
    proc = kvgate("run", "g1", "--resume", str(run), "--inventory", str(inventory), "--no-pdf")
    assert proc.returncode == 3, proc.stderr  # ERROR: the checks could not keep their evidence
    assert "facts is a symlink or not a directory (refused)" in (run / "checks.jsonl").read_text()
    assert list(outside.iterdir()) == []  # nothing written through the link


def test_a_planted_site_link_in_the_results_root_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "sealed").symlink_to(outside)
    inventory = g1_inventory(tmp_path, threads=1)
    proc = kvgate(
        "run", "g1", "--inventory", str(inventory), "--results", str(tmp_path / "results"), "--no-pdf"
    )
    assert proc.returncode == 4, proc.stderr
    assert list(outside.iterdir()) == []


@pytest.fixture
def passphrase_key(tmp_path: Path) -> Path:
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", str(key)], check=True)
    return key


def test_a_key_with_a_passphrase_is_refused_at_once_even_at_a_terminal(
    run: Path, passphrase_key: Path
) -> None:
    """Under `script` kvgate has a terminal, where ssh-keygen prompted until its 60 s timeout (exit 70)."""
    argv = f"{sys.executable} -m kvgate.cli sign {run} --key {passphrase_key} --identity eng@site --no-pdf"
    cmd = ["script", "-qec", argv, "/dev/null"]
    proc = subprocess.run(
        cmd, cwd=Path(__file__).parents[2], capture_output=True, text=True, timeout=40, check=False
    )
    text = " ".join(proc.stdout.split())
    assert proc.returncode == 4, text
    assert "protected by a passphrase" in text
    assert not (run / "manifest.json.sig").exists()


def test_an_identity_with_a_newline_is_refused(run: Path, tmp_path: Path) -> None:
    key = tmp_path / "k"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    proc = kvgate("sign", str(run), "--key", str(key), "--identity", "eng@site\n-----END SSH SIGNATURE-----")
    said(proc, 4, "--identity", "expected one word of letters, digits and ._@+-")
    assert not (run / "manifest.json.sig").exists()


def test_a_missing_allowed_signers_file_is_refused(run: Path, tmp_path: Path) -> None:
    missing = tmp_path / "allowed_signers"
    said(
        kvgate("report", str(run), "--no-pdf", "--allowed-signers", str(missing)),
        4,
        f"{missing}: no such file",
    )


@pytest.mark.parametrize("command", ["run", "preflight", "rejudge", "plan"])
def test_results_naming_a_regular_file_is_named(run: Path, tmp_path: Path, command: str) -> None:
    file = tmp_path / "results.txt"
    file.write_text("not a directory")
    inventory = str(g1_inventory(tmp_path, threads=1))
    argv = {
        "run": ["run", "g1", "--inventory", inventory],
        "preflight": ["preflight", "--inventory", inventory],
        "rejudge": ["rejudge", str(run)],
        "plan": ["plan", "--inventory", inventory],
    }[command]
    said(
        kvgate(*argv, "--results", str(file), "--no-pdf" if command != "plan" else "--reuse=1"),
        4,
        f"--results {file}: not a directory",
    )
