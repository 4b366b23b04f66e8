"""kvgate.base.safefile: nothing below a root is written through a link, nothing read is a FIFO's wait.

Issue 23 items 3 and 5; on main a directory link below the run was written through and
these functions did not exist.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvgate.base.errors import StoreError
from kvgate.base.safefile import (
    append_line,
    make_dirs,
    own_directory,
    plain_path,
    read_file,
    remove,
    write_file,
)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    return tmp_path / "outside"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    return tmp_path / "root"


def test_a_link_at_any_directory_below_the_root_is_refused(root: Path, outside: Path) -> None:
    make_dirs(root / "a", root=root)
    (root / "a" / "b").symlink_to(outside)
    with pytest.raises(StoreError, match="b is a symlink or not a directory"):
        write_file(root / "a" / "b" / "c" / "f.json", b"{}", root=root)
    with pytest.raises(StoreError, match="b is a symlink"):
        append_line(root / "a" / "b" / "x.jsonl", "{}", root=root)
    assert list(outside.iterdir()) == []


def test_a_link_at_the_file_is_replaced_or_refused_never_written_through(root: Path, outside: Path) -> None:
    (root / "checks.jsonl").symlink_to(outside / "checks.jsonl")
    with pytest.raises(StoreError, match=r"checks\.jsonl: cannot write"):
        append_line(root / "checks.jsonl", "{}", root=root)
    (root / "run.json").symlink_to(outside / "run.json")
    write_file(root / "run.json", b"{}", root=root)
    assert not (root / "run.json").is_symlink()
    remove(root / "run.json", root=root)
    assert list(outside.iterdir()) == []


def test_outside_the_root_or_through_dotdot_is_refused(root: Path, outside: Path) -> None:
    for path in (outside / "f", root / ".." / "outside" / "f"):
        with pytest.raises(StoreError, match="kvgate writes only under"):
            write_file(path, b"x", root=root)
    assert list(outside.iterdir()) == []


def test_plain_path_refuses_a_dangling_link_for_sqlite(root: Path, outside: Path) -> None:
    """The history store's case: sqlite3.connect would create the link's target outside the root."""
    (root / "history.sqlite").symlink_to(outside / "history.sqlite")
    with pytest.raises(StoreError, match="a symlink or not a regular file"):
        plain_path(root / "history.sqlite", root=root)
    assert plain_path(root / "site" / "h.sqlite", root=root) == root / "site" / "h.sqlite"
    assert (root / "site").is_dir()


@pytest.mark.parametrize("kind", ["fifo", "dir", "link"])
def test_only_a_regular_file_is_read(root: Path, kind: str) -> None:
    path = root / "manifest.json"
    if kind == "fifo":
        os.mkfifo(path)  # opened O_NONBLOCK: refused at once instead of waiting for a writer
    elif kind == "dir":
        path.mkdir()
    else:
        (root / "real.json").write_text("{}")
        path.symlink_to(root / "real.json")
    got = {"fifo": "a FIFO", "dir": "a directory", "link": "a symlink"}[kind]
    with pytest.raises(StoreError, match=rf"manifest\.json: expected a regular file, got {got}"):
        read_file(path, max_bytes=1024)


@pytest.mark.parametrize("plant", ["symlink", "fifo"])
def test_the_soak_windows_the_report_reads_are_a_regular_file(root: Path, outside: Path, plant: str) -> None:
    """A windows.jsonl planted as a link (to a file outside the run) or a FIFO is refused by name."""
    from kvgate.report.g4_tables import soak_windows

    windows = root / "windows.jsonl"
    if plant == "symlink":
        (outside / "other.jsonl").write_text('{"end_unix_s": 1}\n')
        windows.symlink_to(outside / "other.jsonl")
    else:
        os.mkfifo(windows)
    with pytest.raises(StoreError, match=r"windows\.jsonl"):
        soak_windows(windows)
    assert soak_windows(root / "absent.jsonl") == []


def test_a_model_cache_others_could_fill_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # /var/tmp/kvgate-models made by someone else, or left world-writable
    with pytest.raises(StoreError, match="writable by other users"):
        own_directory(shared)
    (tmp_path / "link").symlink_to(shared)
    with pytest.raises(StoreError, match="a symlink"):
        own_directory(tmp_path / "link")
    assert own_directory(tmp_path / "a" / "b").is_dir()
