"""Writing files in a run directory without following what someone left there.

A run directory may be handed to kvgate again (``kvgate report RUN``, ``--resume``)
after others could write in it. A file is therefore replaced, never written in
place: the new content goes to a temporary file that ``mkstemp`` creates in the
same directory (``O_CREAT|O_EXCL`` under a random name, so never through a planted
link), is flushed to disk, and is renamed over the target; a rename replaces a
symlink planted at the target's name instead of writing where it points. Lines are
appended with ``O_NOFOLLOW``.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> (d / "report.html.tmp").symlink_to("/etc/hostname")  # what the old code wrote through
>>> write_file(d / "report.html", b"<html>")
>>> (d / "report.html").read_bytes(), sorted(p.name for p in d.iterdir())
(b'<html>', ['report.html', 'report.html.tmp'])
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

MODE = 0o644  # what a plain write gave these files under the usual umask (mkstemp makes 0600)


@contextmanager
def replacing(path: Path) -> Iterator[BinaryIO]:
    """A binary file whose content replaces ``path`` atomically when the block ends without error."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
            os.fchmod(f.fileno(), MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_file(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (see the module docstring)."""
    with replacing(path) as f:
        f.write(data)


def append_line(path: Path, line: str, *, sync: bool = False) -> None:
    """Append one line to ``path`` (created if absent), refusing to follow a symlink there."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, MODE)
    with os.fdopen(fd, "a") as f:
        f.write(line + "\n")
        f.flush()
        if sync:
            os.fsync(f.fileno())
