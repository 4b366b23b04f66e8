"""Every chunk read back is verified: a flipped byte or a misplaced chunk is reported with file and offset."""

import os
import shutil
import threading
from pathlib import Path

import pytest

from kvgate.probes.agent.content import Pattern, read_tag
from kvgate.probes.agent.odirect import DirectTracker, alignment_for
from kvgate.probes.agent.readers import Cell, Verifier, VerifyPool, make_readers, read_cells
from kvgate.probes.agent.writers import CellWriter

CELL = 64 << 10


def write(tmp_path: Path, name: str, size: int, file_id: int, *, direct: bool = True) -> tuple[str, Pattern]:
    pattern = Pattern(seed=42, cell_bytes=CELL, algorithm="crc32")
    writer = CellWriter(
        pattern, direct=direct, tracker=DirectTracker(direct), align=alignment_for(str(tmp_path))
    )
    path = str(tmp_path / name)
    writer.write_file(path, size, file_id=file_id)
    return path, pattern


def cells_of(path: str, file_id: int, size: int) -> list[Cell]:
    return [Cell(path, file_id, k, k * CELL, min(CELL, size - k * CELL)) for k in range(-(-size // CELL))]


def verify(pattern: Pattern, cells: list[Cell], tmp_path: Path, threads: int = 2) -> Verifier:
    verifier = Verifier(pattern)
    tracker = DirectTracker(True)
    readers = make_readers(
        threads, io_bytes=CELL, align=alignment_for(str(tmp_path)), direct=True, tracker=tracker
    )
    with VerifyPool(verifier) as pool:
        read_cells(cells, readers, pool=pool, progress=None, stop=threading.Event())
    return verifier


def test_clean_files_verify_including_an_unaligned_tail(tmp_path: Path) -> None:
    size = 5 * CELL + 1000  # the O_DIRECT writer rounds the tail up and truncates back
    path, pattern = write(tmp_path, "a.bin", size, 7)
    assert os.path.getsize(path) == size
    report = verify(pattern, cells_of(path, 7, size), tmp_path).report()
    assert report["verify_ok"]
    assert report["checksums_verified"] == 6
    assert report["corrupt"] == []


@pytest.mark.parametrize("offset", [0, 12345, 3 * 65536 + 65535 - 5])
def test_a_flipped_byte_is_reported_with_file_and_offset(tmp_path: Path, offset: int) -> None:
    size = 4 * CELL
    path, pattern = write(tmp_path, "chunk.bin", size, 3)
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)
        f.seek(offset)
        f.write(bytes([byte[0] ^ 0x01]))
    report = verify(pattern, cells_of(path, 3, size), tmp_path).report()
    assert not report["verify_ok"]
    assert report["checksums_failed"] == 1
    assert report["checksums_verified"] == 3
    (bad,) = report["corrupt"]
    assert bad["file"] == path
    assert bad["offset_bytes"] == offset
    assert bad["cell"] == offset // CELL


def test_a_misplaced_chunk_names_the_chunk_it_really_is(tmp_path: Path) -> None:
    size = 2 * CELL
    a, pattern = write(tmp_path, "a.bin", size, 1, direct=False)
    b, _ = write(tmp_path, "b.bin", size, 2, direct=False)
    shutil.copyfile(a, b)  # b now holds a's content: same bytes, wrong place
    report = verify(pattern, cells_of(b, 2, size), tmp_path, threads=1).report()
    assert report["checksums_failed"] == 2
    assert report["corrupt"][0]["found_tag"] == {"seed": 42, "file_id": 1, "cell": 0}


def test_expected_digest_equals_digest_of_generated_bytes() -> None:
    for algorithm in ("crc32", "sha256", "blake2b"):
        pattern = Pattern(seed=1, cell_bytes=8192, algorithm=algorithm)
        for length in (8192, 100, 20):  # full, tail, tail shorter than the tag
            data = pattern.expected_bytes(9, 4, length)
            assert pattern.digest(data) == pattern.expected(9, 4, length)
    assert read_tag(Pattern(seed=1, cell_bytes=8192).expected_bytes(9, 4, 8192)) == {
        "seed": 1,
        "file_id": 9,
        "cell": 4,
    }


def test_content_differs_between_seeds_files_and_cells() -> None:
    p1, p2 = Pattern(seed=1, cell_bytes=4096), Pattern(seed=2, cell_bytes=4096)
    digests = {
        p1.expected(0, 0, 4096),
        p1.expected(1, 0, 4096),
        p1.expected(0, 1, 4096),
        p2.expected(0, 0, 4096),
    }
    assert len(digests) == 4
