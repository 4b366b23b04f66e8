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
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from kvgate.base.errors import ModifiedRun, StoreError, UsageError
from kvgate.base.safefile import open_regular, read_file, remove, write_file
from kvgate.record.run_files import MAX_RUN_FILE_BYTES, parse_json, read_text
from kvgate.record.signature import SIGNATURE, check_identity, check_signature, sign

MANIFEST = "manifest.json"
SCHEMA = "kvgate.manifest/1"
RENDERS = frozenset({"report.html", "report.pdf", "junit.xml", "report.sha256", MANIFEST, SIGNATURE})
NOT_REGULAR = "not a regular file"  # what a link, FIFO or device in the run directory hashes to
NO_MANIFEST = "no manifest (the run did not finish)"
MODIFIED = "modified after the run"


def _hashes(run_dir: Path) -> dict[str, str]:
    """sha256 of every recorded file, by its path relative to the run directory (no renders).

    A link or a FIFO is listed as NOT_REGULAR, never followed or read: one planted later shows.
    """
    out = {}
    for path in sorted(run_dir.rglob("*")):
        rel = path.relative_to(run_dir).as_posix()
        mode = os.lstat(path).st_mode
        if rel in RENDERS or rel.endswith(".tmp") or stat.S_ISDIR(mode):
            continue
        out[rel] = _sha256(path) if stat.S_ISREG(mode) else NOT_REGULAR
    return out


def _sha256(path: Path) -> str:
    with open_regular(path) as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def write_manifest(run_dir: Path) -> str:
    """Hash the run as it ended; returns the manifest's own sha256 (a previous signature is void)."""
    doc = {"schema": SCHEMA, "run": run_dir.name, "files": _hashes(run_dir)}
    data = (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()
    write_file(run_dir / MANIFEST, data, root=run_dir)
    remove(run_dir / SIGNATURE, root=run_dir)  # it signed the run as it was before this change
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Verification:
    """What :func:`verify` found: the state of the record, and who signed it."""

    status: str  # "verified" | MODIFIED | NO_MANIFEST
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
        text = f"every file matches the run's manifest (sha256 {self.manifest_sha256[:16]})"
        if self.signature_problem:
            return f"{text}; signature NOT valid: {self.signature_problem}"
        if self.signer:
            return f"{text}; signed by {self.signer}"
        # a reader asked what "verified" was checked against: a manifest the same tool wrote
        return f"{text}; not signed, so this shows accidental change only (kvgate sign)"


def verify_manifest(run_dir: Path, *, allowed_signers: Path | None = None) -> Verification:
    """Recompute the run's hashes against its manifest, and check its signature if there is one."""
    try:
        data = read_file(run_dir / MANIFEST, max_bytes=MAX_RUN_FILE_BYTES)
        recorded = json.loads(data)["files"]
        if not isinstance(recorded, dict):
            raise TypeError
    except FileNotFoundError:
        return Verification(NO_MANIFEST)
    except (StoreError, ValueError, KeyError, TypeError):  # a FIFO, a directory, bad JSON: not kvgate's
        return Verification(MODIFIED, (MANIFEST,))
    now = _hashes(run_dir)
    changed = tuple(sorted(f for f in set(recorded) | set(now) if recorded.get(f) != now.get(f)))
    digest = hashlib.sha256(data).hexdigest()
    if changed:
        return Verification(MODIFIED, changed, digest)
    signed = os.path.lexists(run_dir / SIGNATURE)
    signer, problem = check_signature(run_dir / SIGNATURE, data, allowed_signers) if signed else ("", "")
    return Verification("verified", (), digest, signer, problem)


def check_seal(run_dir: Path, use: str) -> Verification:
    """The run's seal, checked before ``use`` reads any of its figures (resume, plan, rejudge, G3,
    the gate order, compare, history). A run modified after it ended, whose signature does not
    verify, or whose manifest is gone although its run.json says it ended, is refused: ModifiedRun
    (exit 2) naming the files. Returns the verification otherwise (NO_MANIFEST: a run cut before its
    end, by a crash or a kill, which only ``--resume`` may take up)."""
    found = verify_manifest(run_dir)
    if found.status == NO_MANIFEST and _ended(run_dir):
        found = Verification(MODIFIED, (f"{MANIFEST} (missing, though run.json says the run ended)",))
    if found.status == MODIFIED or found.signature_problem:
        raise ModifiedRun(
            f"{run_dir}: {found.summary()}; {use} refused: a run edited after it was sealed proves "
            "nothing it says (start a new run, or restore the files from the original)"
        )
    return found


def _ended(run_dir: Path) -> bool:
    """Whether run.json says the run ended (every kvgate run writes its manifest as it ends)."""
    try:
        meta = parse_json(read_text(run_dir / "run.json"), str(run_dir / "run.json"))
    except FileNotFoundError:
        return False
    return not isinstance(meta, dict) or meta.get("status") != "running"


def sign_manifest(run_dir: Path, *, key: Path, identity: str) -> Verification:
    """Sign the run's manifest with an SSH key (kvgate.record.signature); the run must verify first."""
    check_identity(identity)
    found = verify_manifest(run_dir)
    if found.status != "verified":
        raise UsageError(f"{run_dir}: cannot sign a run whose record is {found.summary()}")
    sign(run_dir / MANIFEST, key=key, identity=identity)
    return verify_manifest(run_dir)
