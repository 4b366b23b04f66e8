"""The report's own hash: shown in its sign-off, checked by ``kvgate verify-report FILE``.

A document cannot contain the hash of itself, so each HTML document is hashed with a fixed
placeholder (64 zeros) where its hash goes — a ``<meta name="kvgate-report-sha256">`` and the
sign-off line — hashed with the placeholder in place, and the placeholder replaced by that
hash. Verifying undoes it: every occurrence of the hash named in the meta element goes back to
the placeholder, and the sha256 of the result must be that hash. A changed byte anywhere —
the text, the numbers, either copy of the hash — makes them differ.

The PDF is laid out from its own print document, sealed the same way, so the hash it shows is
that document's; a PDF cannot carry its own file hash. Its file hash, and report.html's, are in
``report.sha256`` beside them (``sha256sum -c report.sha256`` checks it too). A hash shows that a
file changed; it is not a signature: whoever can edit the file can recompute it. ``kvgate sign``
binds the run to a person's key.

>>> mark = marker()
>>> text = seal('<meta name="kvgate-report-sha256" content="' + mark + '"><p>x</p>', mark)
>>> check_html(text).ok, check_html(text.replace("<p>x", "<p>y")).ok
(True, False)
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from kvgate.base.errors import StoreError
from kvgate.base.safefile import read_file, read_utf8, write_file
from kvgate.record import MAX_RUN_FILE_BYTES

PLACEHOLDER = "0" * 64
SUMS = "report.sha256"  # sha256sum format: "<sha256>  <file name>" per rendered file
MAX_SUMS_BYTES = 64 << 10  # three lines
_META = re.compile(r'<meta name="kvgate-report-sha256" content="([0-9a-f]{64})">')


def _bytes(path: Path) -> bytes:
    """A rendered file's bytes: a regular file only (kvgate.base.safefile)."""
    return read_file(path, max_bytes=MAX_RUN_FILE_BYTES)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def marker() -> str:
    """Where a document's hash goes while it is rendered: random, so no text of the run can be it."""
    return secrets.token_hex(32)


def seal(html: str, mark: str) -> str:
    """``html`` (rendered with ``mark`` where its hash goes) with its own hash in those places.

    The hash is of the document with PLACEHOLDER in those places; 64 zeros that a run's own text
    holds (a tool's output) are hashed as they are and stay as they are.
    """
    if len(_META.findall(html)) != 1 or mark not in html:
        raise StoreError("report: a sealed document needs exactly one kvgate-report-sha256 meta element")
    return html.replace(mark, sha256(html.replace(mark, PLACEHOLDER).encode()))


@dataclass(frozen=True)
class ReportCheck:
    """What verifying one report file found."""

    ok: bool
    detail: str


def check_html(text: str) -> ReportCheck:
    """Whether a report.html is as kvgate sealed it (see the module docstring)."""
    found = _META.findall(text)
    if len(found) != 1:
        return ReportCheck(
            False, "no kvgate report hash in it (not a sealed kvgate report, or its head was edited)"
        )
    claimed = found[0]
    actual = sha256(text.replace(claimed, PLACEHOLDER).encode())
    if actual != claimed:
        return ReportCheck(False, f"modified: it claims sha256 {claimed}, its content hashes to {actual}")
    return ReportCheck(True, f"unmodified: its content hashes to the sha256 it shows, {claimed}")


def write_sums(run_dir: Path, names: list[str]) -> Path:
    """``report.sha256`` listing each rendered file's sha256 (the PDF cannot carry its own)."""
    lines = [f"{sha256(_bytes(run_dir / name))}  {name}\n" for name in names]
    write_file(run_dir / SUMS, "".join(lines).encode(), root=run_dir)
    return run_dir / SUMS


def check_sums(path: Path) -> ReportCheck | None:
    """The file against ``report.sha256`` beside it; None when there is no such list or no line for it."""
    try:
        text = read_utf8(path.parent / SUMS, max_bytes=MAX_SUMS_BYTES)
    except FileNotFoundError:
        return None
    pairs = (line.split("  ", 1) for line in text.splitlines() if "  " in line)
    listed = {name: digest for digest, name in pairs}
    claimed = listed.get(path.name)
    if claimed is None:
        return None
    actual = sha256(_bytes(path))
    if actual != claimed:
        return ReportCheck(False, f"modified: {SUMS} lists sha256 {claimed}, the file hashes to {actual}")
    return ReportCheck(True, f"unmodified: the file hashes to the sha256 {SUMS} lists, {claimed}")


def verify_report(path: Path) -> list[ReportCheck]:
    """Every check that applies to ``path``: its own hash (HTML) and report.sha256 (any render)."""
    try:
        data = _bytes(path)
    except FileNotFoundError:
        raise StoreError(f"{path}: no such report file") from None
    out = []
    if path.suffix == ".html":
        try:
            out.append(check_html(data.decode("utf-8")))
        except UnicodeDecodeError:
            out.append(ReportCheck(False, "modified: not valid UTF-8 (kvgate writes UTF-8)"))
    listed = check_sums(path)
    if listed is not None:
        out.append(listed)
    if not out:
        raise StoreError(f"{path}: nothing to verify it against: not an HTML report and no {SUMS} beside it")
    return out
