"""A run's signature: the engineer's SSH key over its manifest (``ssh-keygen -Y``, namespace kvgate-run).

ssh-keygen never waits for a person here: it runs in a session of its own (no
controlling terminal to open), stdin from /dev/null and no askpass program, so a key
that needs a passphrase fails at once and is said to (load it into ssh-agent, or sign
with a key kept for signing). The identity is one word of letters, digits and
``._@+-``: it is written into the signature file's first line and read back as
``-I`` for ``ssh-keygen -Y verify``, where a newline or a space would change its meaning.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

from kvgate.base.errors import StoreError, UsageError
from kvgate.base.safefile import read_utf8, write_file

SIGNATURE = "manifest.json.sig"
NAMESPACE = "kvgate-run"  # ssh-keygen -Y: a signature for one purpose is not valid for another
IDENTITY = re.compile(r"[A-Za-z0-9._@+-]{1,128}")
MAX_SIGNATURE_BYTES = 64 << 10
PROMPTERS = ("SSH_ASKPASS", "SSH_ASKPASS_REQUIRE", "DISPLAY")  # what could make ssh-keygen ask someone
TIMEOUT_S = 60


def check_identity(identity: str) -> str:
    """``identity`` as given, if it is one word kvgate can write and read back (see the docstring)."""
    if not IDENTITY.fullmatch(identity):
        raise UsageError(
            f"--identity {identity!r}: expected one word of letters, digits and ._@+- "
            "(at most 128), e.g. name@site, as in the site's allowed_signers list"
        )
    return identity


def sign(manifest: Path, *, key: Path, identity: str) -> None:
    """Write ``manifest``'s signature beside it, headed by the signer's identity."""
    check_identity(identity)
    if not key.is_file():
        raise UsageError(f"--key {key}: no such private key file")
    res = _ssh_keygen("-Y", "sign", "-f", str(key), "-n", NAMESPACE, str(manifest))
    if res.returncode != 0:
        raise UsageError(f"--key {key}: ssh-keygen -Y sign failed: {_why(res.stderr)}")
    sig = manifest.parent / SIGNATURE
    text = read_utf8(sig, max_bytes=MAX_SIGNATURE_BYTES)
    write_file(sig, (f"# kvgate signer: {identity}\n" + text).encode(), root=manifest.parent)


def _why(stderr: str) -> str:
    if "passphrase" in stderr:
        return (
            "the key is protected by a passphrase, and kvgate never waits for a prompt: "
            "add it to ssh-agent (`ssh-add KEY`) and pass its .pub as --key, or use a key without one"
        )
    return stderr.strip()[-300:] or "no message"


def check_signature(path: Path, manifest: bytes, allowed_signers: Path | None) -> tuple[str, str]:
    """(signer, problem): who signed, and why the signature does not verify ("" when it does)."""
    try:
        sig_text = read_utf8(path, max_bytes=MAX_SIGNATURE_BYTES)
    except StoreError as exc:  # a directory, a FIFO, bytes that are not text: no signature of kvgate's
        return "?", str(exc)
    first = sig_text.splitlines()[0] if sig_text else ""
    identity = first.removeprefix("# kvgate signer: ") if first.startswith("#") else "?"
    if not IDENTITY.fullmatch(identity):
        return "?", f"{path}: its signer line names no valid identity"
    armored = "".join(line + "\n" for line in sig_text.splitlines() if not line.startswith("#"))
    with tempfile.TemporaryDirectory() as tmp:
        sig = Path(tmp) / "manifest.sig"
        sig.write_text(armored)
        check = (
            ("verify", "-f", str(allowed_signers), "-I", identity)
            if allowed_signers
            else ("check-novalidate",)
        )
        res = _ssh_keygen("-Y", *check, "-n", NAMESPACE, "-s", str(sig), stdin=manifest)
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
    """ssh-keygen with no terminal, no askpass and stdin from ``stdin`` or /dev/null (never a prompt)."""
    env = {k: v for k, v in os.environ.items() if k not in PROMPTERS}
    try:
        return subprocess.run(
            ["ssh-keygen", *args],
            input=stdin.decode("utf-8", "replace") if stdin is not None else None,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
            env=env,
            start_new_session=True,  # setsid: no controlling terminal, so no /dev/tty to prompt on
        )
    except FileNotFoundError:
        raise StoreError(
            "ssh-keygen is not installed: the run's signature cannot be made or checked"
        ) from None
    except subprocess.TimeoutExpired:
        raise StoreError(f"ssh-keygen -Y {args[1]} did not finish within {TIMEOUT_S} s") from None
