"""Deterministic file content and its cell checksums (fast to make, fast to verify).

A file is cut into cells of ``cell_bytes`` (the I/O unit). Every cell is a tiled
random body (``random.Random(seed)``) followed by a 32-byte tag naming the seed,
the file id and the cell index, so a flipped byte, a misplaced chunk or a
stale file is detected and located. The expected digest of a cell costs almost
nothing: the body digest is cached per length and only the tag is added.

>>> p = Pattern(seed=7, cell_bytes=8192, algorithm="crc32")
>>> buf = bytearray(8192)
>>> n = p.fill(memoryview(buf), file_id=3, cell=0, length=8192)
>>> p.digest(memoryview(buf)[:n]) == p.expected(3, 0, n)
True
"""

from __future__ import annotations

import hashlib
import random
import struct
import threading
import zlib
from typing import Any

TAG = struct.Struct("<4sQQQI")  # magic, seed, file id, cell index, tag check (32 bytes)
TAG_BYTES = TAG.size
MAGIC = b"KVGT"
TILE_BYTES = 1 << 20
MASK64 = (1 << 64) - 1
ALGORITHMS = ("crc32", "sha1", "sha256", "md5", "blake2b")


class Hasher:
    """A hashlib-like running digest; crc32 (zlib, GIL-free, ~3 GB/s per core) or a hashlib name."""

    def __init__(self, algorithm: str, state: Any = None) -> None:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown checksum algorithm {algorithm!r}; expected one of {ALGORITHMS}")
        self.algorithm = algorithm
        if state is not None:
            self._state = state
        elif algorithm == "crc32":
            self._state = 0
        else:
            self._state = hashlib.new(algorithm)

    def update(self, data: Any) -> Hasher:
        """Feed bytes; returns self so calls chain."""
        if self.algorithm == "crc32":
            self._state = zlib.crc32(data, self._state)
        else:
            self._state.update(data)
        return self

    def copy(self) -> Hasher:
        """An independent hasher with the same state."""
        state = self._state if self.algorithm == "crc32" else self._state.copy()
        return Hasher(self.algorithm, state)

    def digest(self) -> bytes:
        """The digest bytes (4 little-endian bytes for crc32)."""
        if self.algorithm == "crc32":
            return int(self._state).to_bytes(4, "little")
        return bytes(self._state.digest())


class Pattern:
    """The content generator and checksum oracle for one seed and cell size."""

    def __init__(self, *, seed: int, cell_bytes: int, algorithm: str = "crc32") -> None:
        self.seed = seed & MASK64
        self.cell_bytes = cell_bytes
        self.algorithm = algorithm
        Hasher(algorithm)  # validates the name early
        tile = random.Random(seed).getrandbits(TILE_BYTES * 8).to_bytes(TILE_BYTES, "little")
        self.body = memoryview(tile * (cell_bytes // TILE_BYTES + 1))
        self._cache: dict[int, Hasher] = {}
        self._lock = threading.Lock()

    def tag(self, file_id: int, cell: int) -> bytes:
        """The 32-byte tag that ends a cell."""
        file_id, cell = file_id & MASK64, cell & MASK64
        return TAG.pack(MAGIC, self.seed, file_id, cell, tag_check(self.seed, file_id, cell))

    def fill(self, buf: memoryview, *, file_id: int, cell: int, length: int) -> int:
        """Write the first ``length`` bytes of a cell into ``buf``; returns ``length``."""
        body = max(0, length - TAG_BYTES)
        buf[:body] = self.body[:body]
        buf[body:length] = self.tag(file_id, cell)[: length - body]
        return length

    def stamp(self, buf: memoryview, *, file_id: int, cell: int, length: int) -> None:
        """Rewrite only the tag of a cell whose body is already in ``buf`` (the writer's hot path)."""
        body = max(0, length - TAG_BYTES)
        buf[body:length] = self.tag(file_id, cell)[: length - body]

    def digest(self, data: Any) -> bytes:
        """Digest of bytes actually read."""
        return Hasher(self.algorithm).update(data).digest()

    def expected(self, file_id: int, cell: int, length: int) -> bytes:
        """Digest the cell must have, from the cached body digest plus its tag."""
        body = max(0, length - TAG_BYTES)
        with self._lock:
            base = self._cache.get(body)
            if base is None:
                base = self._cache[body] = Hasher(self.algorithm).update(self.body[:body])
            running = base.copy()
        return running.update(self.tag(file_id, cell)[: length - body]).digest()

    def expected_bytes(self, file_id: int, cell: int, length: int) -> bytes:
        """The exact bytes of a cell (slow path: only to locate a corruption)."""
        buf = bytearray(length)
        self.fill(memoryview(buf), file_id=file_id, cell=cell, length=length)
        return bytes(buf)


def first_difference(actual: Any, expected: bytes) -> int:
    """Offset of the first differing byte (or the shorter length), comparing 4 KiB blocks first."""
    view = memoryview(actual)
    n = min(len(view), len(expected))
    for start in range(0, n, 4096):
        end = min(n, start + 4096)
        if view[start:end] != expected[start:end]:
            return next(i for i in range(start, end) if view[i] != expected[i])
    return n


def tag_check(seed: int, file_id: int, cell: int) -> int:
    """A non-linear check of the tag fields (a CRC here would cancel out of the cell's CRC)."""
    return int.from_bytes(
        hashlib.blake2b(struct.pack("<QQQ", seed, file_id, cell), digest_size=4).digest(), "little"
    )


def read_tag(cell_bytes: Any) -> dict[str, int] | None:
    """Parse the tag at the end of a full cell, or None if it is not one of ours."""
    view = memoryview(cell_bytes)
    if len(view) < TAG_BYTES:
        return None
    magic, seed, file_id, cell, check = TAG.unpack(view[-TAG_BYTES:])
    if magic != MAGIC or check != tag_check(seed, file_id, cell):
        return None
    return {"seed": seed, "file_id": file_id, "cell": cell}


def cell_count(size: int, cell_bytes: int) -> int:
    """How many cells cover ``size`` bytes."""
    return -(-size // cell_bytes)
