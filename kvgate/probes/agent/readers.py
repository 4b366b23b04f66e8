"""Read cells with T threads (aligned, O_DIRECT when asked) and verify every one of them.

Each reader owns a pair of pre-touched aligned buffers (huge pages where the
kernel gives them: see odirect), so nothing is allocated or faulted in the
measured window; the checksums (zlib.crc32 or hashlib, which release the GIL
for large buffers) run on a verify pool while the reader reads on into its
other buffer.
"""

from __future__ import annotations

import errno
import itertools
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvgate.probes.agent.content import Pattern, first_difference, read_tag
from kvgate.probes.agent.events import Cancelled, Progress
from kvgate.probes.agent.odirect import DirectTracker, aligned_buffer, open_file, read_range, reopen_buffered

MAX_CORRUPT_REPORTED = 20


@dataclass(frozen=True)
class Cell:
    """One verification unit: ``length`` bytes at ``offset`` of ``path`` (cell ``cell`` of ``file_id``)."""

    path: str
    file_id: int
    cell: int
    offset: int
    length: int


class Verifier:
    """Compares read cells with the pattern; keeps the first corruptions, located to the byte."""

    def __init__(self, pattern: Pattern) -> None:
        self.pattern = pattern
        self.verified = 0
        self.failed = 0
        self.corrupt: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def check(self, cell: Cell, data: Any) -> bool:
        """True if ``data`` is exactly what was written to that cell; else record where it differs."""
        actual = self.pattern.digest(data)
        expected = self.pattern.expected(cell.file_id, cell.cell, cell.length)
        with self._lock:
            if actual == expected:
                self.verified += 1
                return True
            self.failed += 1
            keep = self.failed <= MAX_CORRUPT_REPORTED  # locating costs: only for the reported ones
        if keep:
            where = first_difference(data, self.pattern.expected_bytes(cell.file_id, cell.cell, cell.length))
            record = {
                "file": cell.path,
                "offset_bytes": cell.offset + where,
                "cell": cell.cell,
                "expected_digest": expected.hex(),
                "actual_digest": actual.hex(),
                "found_tag": read_tag(data) if len(data) == cell.length else None,
            }
            with self._lock:
                self.corrupt.append(record)
        return False

    def report(self) -> dict[str, Any]:
        """The verification fields of a result."""
        return {
            "checksum_algorithm": self.pattern.algorithm,
            "checksums_verified": self.verified,
            "checksums_failed": self.failed,
            "verify_ok": self.failed == 0 and self.verified > 0,
            "corrupt": list(self.corrupt),
        }


class VerifyPool:
    """Checksums off the I/O threads: a reader hands over a filled buffer and reads on into its other one.

    Verification is instrumentation, not part of the emulated read path, so it
    must not serialise with the I/O (a serial P=1 reader would look slower than
    it is and the parallel/serial ratio would be inflated).
    """

    def __init__(self, verifier: Verifier, threads: int | None = None) -> None:
        self.verifier = verifier
        self._queue: queue.SimpleQueue[tuple[Cell, Any, threading.Event] | None] = queue.SimpleQueue()
        self._errors: list[BaseException] = []
        n = threads or os.cpu_count() or 1
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(n)]
        for t in self._threads:
            t.start()

    def submit(self, cell: Cell, data: Any) -> threading.Event:
        """Queue one cell's bytes; the event is set once they are verified (the buffer is free again)."""
        done = threading.Event()
        self._queue.put((cell, data, done))
        return done

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            cell, data, done = item
            item = None
            try:
                self.verifier.check(cell, data)
            except BaseException as exc:
                self._errors.append(exc)
            finally:
                data = None  # drop the view before the buffer is declared free (it may be closed next)
                done.set()

    def close(self) -> None:
        """Stop the verifier threads; raise the first error one of them hit."""
        for _ in self._threads:
            self._queue.put(None)
        for t in self._threads:
            t.join()
        if self._errors:
            raise self._errors[0]

    def __enter__(self) -> VerifyPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BufferPair:
    """Two buffers used in turn; one is handed out again only once its last contents were verified."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.bufs = [make(), make()]
        self._pending: list[threading.Event | None] = [None, None]
        self._turn = 0

    def take(self) -> tuple[int, Any]:
        """(index, buffer) of the next free buffer, waiting for its verification if needed."""
        k, self._turn = self._turn, self._turn ^ 1
        pending = self._pending[k]
        if pending is not None:
            pending.wait()
        return k, self.bufs[k]

    def submit(self, k: int, pool: VerifyPool, cell: Cell, data: Any) -> None:
        """Hand buffer ``k`` (holding ``data`` of ``cell``) to the pool."""
        self._pending[k] = pool.submit(cell, data)

    def drain(self) -> None:
        """Wait until both buffers are verified."""
        for pending in self._pending:
            if pending is not None:
                pending.wait()


class CellReader:
    """One reader with a pair of pre-touched aligned buffers; opens a cell's file per read (a chunk GET)."""

    def __init__(self, *, io_bytes: int, align: int, direct: bool, tracker: DirectTracker) -> None:
        self.align, self.direct, self.tracker = align, direct, tracker
        self.pair = BufferPair(lambda: aligned_buffer(io_bytes + 2 * align))
        for buf in self.pair.bufs:
            buf[:] = bytes(len(buf))  # fault every page in now, not in the measured window

    def read(self, cell: Cell, pool: VerifyPool) -> None:
        """Read a cell into the next free buffer and hand it to ``pool`` for verification."""
        k, buf = self.pair.take()
        self.pair.submit(k, pool, cell, self._read_into(cell, buf))

    def drain(self) -> None:
        """Wait until both buffers are verified."""
        self.pair.drain()

    def _read_into(self, cell: Cell, buf: Any) -> memoryview:
        fd = open_file(cell.path, os.O_RDONLY, direct=self.direct, tracker=self.tracker)
        try:
            try:
                return read_range(fd, buf, cell.offset, cell.length, self.align)
            except OSError as exc:
                if exc.errno != errno.EINVAL or not self.direct:  # direct I/O refused after open
                    raise
                fd = reopen_buffered(cell.path, os.O_RDONLY, fd, self.tracker, exc)
                return read_range(fd, buf, cell.offset, cell.length, self.align)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Release the buffers."""
        self.drain()
        for buf in self.pair.bufs:
            buf.release()  # the last view of the mapping: unmapped now


def make_readers(
    n: int, *, io_bytes: int, align: int, direct: bool, tracker: DirectTracker
) -> list[CellReader]:
    """``n`` readers with pre-touched buffers."""
    return [CellReader(io_bytes=io_bytes, align=align, direct=direct, tracker=tracker) for _ in range(n)]


def read_cells(
    cells: list[Cell],
    readers: list[CellReader],
    *,
    pool: VerifyPool,
    progress: Progress | None,
    stop: threading.Event,
) -> int:
    """Read ``cells`` with one thread per reader (inline for one), verified by ``pool``; returns bytes."""
    index = itertools.count()
    done = [0] * len(readers)

    def work(slot: int) -> None:
        try:
            while True:
                i = next(index)
                if i >= len(cells):
                    return
                if stop.is_set():
                    raise Cancelled("stopped while reading")
                readers[slot].read(cells[i], pool)
                done[slot] += cells[i].length
                if progress is not None:
                    progress.add(cells[i].length)
        finally:
            readers[slot].drain()

    run_threads(work, len(readers), stop)
    return sum(done)


def run_threads(
    target: Callable[[int], None], n: int, stop: threading.Event, *, started: Callable[[], None] | None = None
) -> None:
    """Run ``target(slot)`` for slots 0..n-1 (inline for one); the first failure stops all and is raised.

    ``started`` runs on this thread once every thread is started (to release and time them together).
    """
    if n == 1 and started is None:
        target(0)
        return
    errors: list[BaseException] = []

    def guarded(slot: int) -> None:
        try:
            target(slot)
        except BaseException as exc:
            errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=guarded, args=(slot,), daemon=True) for slot in range(n)]
    for t in threads:
        t.start()
    if started is not None:
        started()
    for t in threads:
        t.join()
    if errors:
        raise first_cause(errors)


def first_cause(errors: list[BaseException]) -> BaseException:
    """The error that stopped the others (not the Cancelled it caused in its siblings)."""
    return next((e for e in errors if not isinstance(e, Cancelled)), errors[0])
