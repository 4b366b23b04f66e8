"""The run's manifest: what the run wrote, hashed at its end, verified wherever the run is read again.

A signed acceptance report is evidence, so an edit after the run must show. At the end of
every run (and of every resume) kvgate writes ``manifest.json``: the sha256 of every
file of the run directory (run.json, checks.jsonl, facts, every artifact) except the
renders (report.html, report.pdf, junit.xml and their report.sha256: re-made from the record
at any time) and the manifest and its signature. :func:`verify` recomputes it: rendering a run and a
later gate reading an earlier one (gate order) show "verified" or "modified after the
run" with the files that changed.

A manifest beside the run catches edits, not a forger who recomputes it: a site signs
it with a key it already has (``kvgate sign RUN --key ~/.ssh/id_ed25519 --identity
name@site``, OpenSSH's ``ssh-keygen -Y sign`` in the ``kvgate-run`` namespace). The
report then shows who signed with which key; with ``--allowed-signers FILE`` (the
OpenSSH allowed_signers format) the signer is checked against the site's list too.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kvgate.base.errors import StoreError, UsageError
from kvgate.base.safefile import write_file

MANIFEST, SIGNATURE = "manifest.json", "manifest.json.sig"
SCHEMA = "kvgate.manifest/1"
NAMESPACE = "kvgate-run"  # ssh-keygen -Y: a signature for one purpose is not valid for another
RENDERS = frozenset({"report.html", "report.pdf", "junit.xml", "report.sha256", MANIFEST, SIGNATURE})


def _hashes(run_dir: Path) -> dict[str, str]:
    """sha256 of every recorded file, by its path relative to the run directory (no renders)."""
    out = {}
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(run_dir).as_posix()
        if rel not in RENDERS and not rel.endswith(".tmp"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def write_manifest(run_dir: Path) -> str:
    """Hash the run as it ended; returns the manifest's own sha256 (a previous signature is void)."""
    doc = {"schema": SCHEMA, "run": run_dir.name, "files": _hashes(run_dir)}
    data = (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()
    write_file(run_dir / MANIFEST, data)
    (run_dir / SIGNATURE).unlink(missing_ok=True)  # it signed the run as it was before this change
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Verification:
    """What :func:`verify` found: the state of the record, and who signed it."""

    status: str  # "verified" | "modified after the run" | "no manifest (the run did not finish)"
    changed: tuple[str, ...] = ()  # files added, removed or changed since the manifest
    manifest_sha256: str = ""
    signer: str = ""  # "identity (key fingerprint)", "" when unsigned
    signature_problem: str = ""  # why a signature that is there does not verify

    @property
    def intact(self) -> bool:
        return self.status == "verified" and not self.signature_problem

    def summary(self) -> str:
        """One line for the report's front page and the CLI."""
        if self.status != "verified":
            shown = ", ".join(self.changed[:8]) + (" …" if len(self.changed) > 8 else "")
            return f"{self.status}" + (f": {shown}" if shown else "")
        text = f"verified unmodified (manifest sha256 {self.manifest_sha256[:16]})"
        if self.signature_problem:
            return f"{text}; signature NOT valid: {self.signature_problem}"
        return f"{text}; signed by {self.signer}" if self.signer else f"{text}; not signed"


def verify_manifest(run_dir: Path, *, allowed_signers: Path | None = None) -> Verification:
    """Recompute the run's hashes against its manifest, and check its signature if there is one."""
    try:
        data = (run_dir / MANIFEST).read_bytes()
    except FileNotFoundError:
        return Verification("no manifest (the run did not finish)")
    try:
        recorded = json.loads(data)["files"]
    except (ValueError, KeyError, TypeError):
        return Verification("modified after the run", (MANIFEST,))
    now = _hashes(run_dir)
    changed = tuple(sorted(f for f in set(recorded) | set(now) if recorded.get(f) != now.get(f)))
    digest = hashlib.sha256(data).hexdigest()
    if changed:
        return Verification("modified after the run", changed, digest)
    signer, problem = (
        _check_signature(run_dir, allowed_signers) if (run_dir / SIGNATURE).exists() else ("", "")
    )
    return Verification("verified", (), digest, signer, problem)


def sign_manifest(run_dir: Path, *, key: Path, identity: str) -> Verification:
    """Sign the run's manifest with an SSH key (``ssh-keygen -Y sign``); the run must verify first."""
    found = verify_manifest(run_dir)
    if found.status != "verified":
        raise UsageError(f"{run_dir}: cannot sign a run whose record is {found.summary()}")
    if not key.is_file():
        raise UsageError(f"--key {key}: no such private key file")
    res = _ssh_keygen("-Y", "sign", "-f", str(key), "-n", NAMESPACE, str(run_dir / MANIFEST))
    if res.returncode != 0:
        raise UsageError(f"ssh-keygen -Y sign with {key} failed: {res.stderr.strip()[-300:]}")
    identity_file = run_dir / SIGNATURE
    text = identity_file.read_text()
    write_file(identity_file, (f"# kvgate signer: {identity}\n" + text).encode())
    return verify_manifest(run_dir)


def _check_signature(run_dir: Path, allowed_signers: Path | None) -> tuple[str, str]:
    """(signer, problem): who signed, and why the signature does not verify ("" when it does)."""
    sig_text = (run_dir / SIGNATURE).read_text()
    identity = sig_text.splitlines()[0].removeprefix("# kvgate signer: ") if sig_text.startswith("#") else "?"
    armored = "".join(line + "\n" for line in sig_text.splitlines() if not line.startswith("#"))
    with tempfile.TemporaryDirectory() as tmp:
        sig = Path(tmp) / "manifest.sig"
        sig.write_text(armored)
        manifest = (run_dir / MANIFEST).read_bytes()
        if allowed_signers is None:
            res = _ssh_keygen("-Y", "check-novalidate", "-n", NAMESPACE, "-s", str(sig), stdin=manifest)
        else:
            args = (
                "-Y",
                "verify",
                "-f",
                str(allowed_signers),
                "-I",
                identity,
                "-n",
                NAMESPACE,
                "-s",
                str(sig),
            )
            res = _ssh_keygen(*args, stdin=manifest)
    key = _fingerprint(res.stdout + res.stderr)
    if res.returncode != 0:
        return f"{identity} ({key})", (res.stderr or res.stdout).strip()[-200:] or "ssh-keygen refused it"
    trusted = "" if allowed_signers is not None else ", key not checked against an allowed_signers list"
    return f"{identity} ({key}{trusted})", ""


def _fingerprint(text: str) -> str:
    for word in text.split():
        if word.startswith("SHA256:"):
            return word.rstrip(".,")
    return "key fingerprint unknown"


def _ssh_keygen(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["ssh-keygen", *args],
            input=stdin.decode() if stdin is not None else None,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except FileNotFoundError:
        raise StoreError(
            "ssh-keygen is not installed: the run's signature cannot be made or checked"
        ) from None
