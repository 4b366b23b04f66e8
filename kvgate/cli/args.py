"""Paths and expressions from the command line, checked before anything runs or connects.

A bad one is a UsageError (exit 4) naming it, instead of a crash after the gate
has created its run directory or reached the hosts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from kvgate.base.errors import UsageError


def check_keyword(expression: str | None) -> None:
    """A ``-k`` expression pytest can compile (its own parser, so both agree)."""
    if expression is None:
        return
    from _pytest.mark.expression import Expression  # pytest's -k grammar; no public entry point

    try:
        Expression.compile(expression)
    except SyntaxError as exc:
        raise UsageError(
            f"-k {expression!r}: not a pytest -k expression ({exc.msg}, column {exc.offset})"
        ) from None
    except RecursionError:
        raise UsageError(f"-k {expression!r}: not a pytest -k expression (nested too deeply)") from None


def check_writable_dir(option: str, path: Path) -> None:
    """``path`` is (or can be made) a directory kvgate can create files and directories in."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path}: not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path, prefix=".kvgate-write-probe-"):
            pass  # creating and removing a directory proves it, whatever the permission bits say to root
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot create run directories there ({exc.strerror})") from None


def check_output_file(option: str, path: Path) -> None:
    """``path`` can be written as a regular file: its directory exists and is writable."""
    if path.exists() and not path.is_file():
        raise UsageError(f"{option} {path}: exists and is not a regular file")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"{option} {path}: the directory {parent} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".kvgate-write-probe-"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({exc.strerror})") from None


def write_output_file(option: str, path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a new temporary file beside it (never a link's target)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with open(fd, "w") as f:
            f.write(text)
        Path(tmp).replace(path)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({exc.strerror})") from None


def check_results_root(option: str, path: Path) -> None:
    """A results root that is read: a directory, or absent (no runs yet), never a file."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path}: not a directory (a results root holds run directories)")


def check_input_file(option: str, path: Path, what: str) -> None:
    """A file the command must read: it exists and is a regular file."""
    if not path.is_file():
        state = "not a regular file" if path.exists() else "no such file"
        raise UsageError(f"{option} {path}: {state} ({what})")
