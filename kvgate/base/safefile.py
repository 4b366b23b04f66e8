"""Reading and writing files under a root kvgate owns without following what someone left there.

A run directory may be handed to kvgate again (``kvgate report RUN``, ``--resume``)
after others could write in it, and a results root is shared. Every write names its
``root`` (the results root or the run directory); the path below it is walked one
directory at a time by file descriptor with ``O_NOFOLLOW``, so a symlink planted at
any directory or file below the root is refused, never written through, and a path
with ``..`` never leaves the root. A file is replaced, never written in place: the
new content goes to a temporary file created ``O_EXCL`` in the same directory, is
flushed to disk and renamed over the target. Lines are appended with ``O_NOFOLLOW``.
What goes wrong is a StoreError naming the file (a read-only run directory,
``report.html`` made a directory).

Reads open only a regular file: ``O_NOFOLLOW|O_NONBLOCK``, then ``fstat``, so a FIFO
at ``manifest.json`` is refused instead of waiting forever for a writer.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> (d / "report.html.tmp").symlink_to("/etc/hostname")  # what the old code wrote through
>>> write_file(d / "report.html", b"<html>", root=d)
>>> (d / "report.html").read_bytes(), sorted(p.name for p in d.iterdir())
(b'<html>', ['report.html', 'report.html.tmp'])
>>> (d / "facts").symlink_to("/etc")
>>> write_file(d / "facts" / "h.json", b"{}", root=d)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
kvgate.base.errors.StoreError: .../facts/h.json: cannot write: facts is a symlink or not a directory (refused)
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from kvgate.base.errors import StoreError

MODE = 0o644  # what a plain write gave these files under the usual umask
DIR_MODE = 0o755
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _parts(path: Path, root: Path) -> tuple[str, ...]:
    """``path``'s names below ``root``; a path outside it (or through ``..``) is refused."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise StoreError(f"{path}: kvgate writes only under {root}") from None
    if not parts or any(p in ("..", ".") for p in parts):
        raise StoreError(f"{path}: kvgate writes only under {root}")
    return parts


def _walk(root: Path, names: tuple[str, ...], where: Path) -> int:
    """A descriptor of ``root/names…``, each directory made if absent and none of them a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the root itself is the user's
    for name in names:
        try:
            with suppress(FileExistsError):
                os.mkdir(name, DIR_MODE, dir_fd=fd)
            nxt = os.open(name, _DIR, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise StoreError(
                    f"{where}: cannot write: {name} is a symlink or not a directory (refused)"
                ) from None
            raise
        finally:
            os.close(fd)
        fd = nxt
    return fd


@contextmanager
def _directory(path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """(descriptor of ``path``'s directory, ``path``'s name); OSError becomes a StoreError naming it."""
    parts = _parts(path, root)
    try:
        fd = _walk(root, parts[:-1], path)
        try:
            yield fd, parts[-1]
        finally:
            os.close(fd)
    except OSError as exc:
        raise StoreError(f"{path}: cannot write ({exc.strerror or exc})") from None


@contextmanager
def replacing(path: Path, *, root: Path) -> Iterator[BinaryIO]:
    """A binary file whose content replaces ``path`` atomically when the block ends without error."""
    with _directory(path, root) as (dfd, name):
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        f = os.fdopen(os.open(tmp, _NEW, MODE, dir_fd=dfd), "wb")
        try:
            with f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise


def write_file(path: Path, data: bytes, *, root: Path) -> None:
    """Replace ``path`` (below ``root``) with ``data`` (see the module docstring)."""
    with replacing(path, root=root) as f:
        f.write(data)


def append_line(path: Path, line: str, *, root: Path, sync: bool = False) -> None:
    """Append one line to ``path`` (created if absent), refusing a symlink anywhere below ``root``."""
    with _directory(path, root) as (dfd, name), os.fdopen(os.open(name, _APPEND, MODE, dir_fd=dfd), "a") as f:
        f.write(line + "\n")
        f.flush()
        if sync:
            os.fsync(f.fileno())


def remove(path: Path, *, root: Path) -> None:
    """Remove the file ``path`` below ``root`` if it is there (a link is removed, never followed)."""
    with _directory(path, root) as (dfd, name), suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dfd)


def make_dirs(path: Path, *, root: Path) -> Path:
    """``path`` and its parents below ``root`` as real directories (none of them a link); returns it."""
    parts = _parts(path, root)
    try:
        os.close(_walk(root, parts, path))
    except OSError as exc:
        raise StoreError(f"{path}: cannot create the directory ({exc.strerror or exc})") from None
    return path


def plain_path(path: Path, *, root: Path) -> Path:
    """``path`` for a library that opens it by name (sqlite3): its directories made below ``root``
    with no link among them, and the file itself absent or a regular file, not a link."""
    _parts(path, root)  # under the root, without ..
    if path.parent != root:
        make_dirs(path.parent, root=root)
    with suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise StoreError(f"{path}: a symlink or not a regular file; kvgate will not open it")
    return path


KINDS = {
    stat.S_ISDIR: "a directory",
    stat.S_ISFIFO: "a FIFO",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
    stat.S_ISLNK: "a symlink",
}


def own_directory(path: Path) -> Path:
    """``path`` as a directory only this user writes, created if missing: a cache kvgate loads models
    from outside its results root (``/var/tmp/kvgate-models``) is refused when it is a symlink,
    another user's, or writable by others — they could plant what the engine loads.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> own_directory(d / "models") == d / "models"
    True
    >>> (d / "planted").symlink_to(d / "models")
    >>> own_directory(d / "planted")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kvgate.base.errors.StoreError: .../planted: a symlink, not a directory of this user's (refused)
    """
    path.mkdir(parents=True, exist_ok=True, mode=0o755)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{path}: {file_kind(st.st_mode)}, not a directory of this user's (refused)")
    if st.st_uid != os.geteuid():
        raise StoreError(f"{path}: owned by uid {st.st_uid}, not this user (refused)")
    if st.st_mode & 0o022:
        raise StoreError(f"{path}: writable by other users (mode {stat.filemode(st.st_mode)}; refused)")
    return path


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, in words ("a FIFO")."""
    return next((name for test, name in KINDS.items() if test(mode)), "something else")


@contextmanager
def open_regular(path: Path) -> Iterator[io.BufferedReader]:
    """``path`` open for reading if it is a regular file: never through a link at its name, never a
    FIFO's wait. FileNotFoundError passes (callers say what absence means); the rest is a StoreError."""
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        raise
    except OSError as exc:
        why = "expected a regular file, got a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise StoreError(f"{path}: {why}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise StoreError(f"{path}: expected a regular file, got {file_kind(mode)}")
    with os.fdopen(fd, "rb") as f:
        yield f


def read_file(path: Path, *, max_bytes: int) -> bytes:
    """A regular file's bytes (at most ``max_bytes``), opened as :func:`open_regular` does."""
    with open_regular(path) as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise StoreError(f"{path}: larger than {max_bytes} bytes")
    return data


def read_utf8(path: Path, *, max_bytes: int) -> str:
    """A regular file's text; bytes that are not UTF-8 are a StoreError naming the file."""
    try:
        return read_file(path, max_bytes=max_bytes).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreError(f"{path}: not UTF-8 text (byte {exc.start})") from None
