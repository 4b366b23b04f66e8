"""Write pattern files from one pre-filled aligned buffer: per cell only the 32-byte tag changes.

The body of every full cell is identical, so the hot loop is "stamp the tag,
pwrite the cell": no per-byte Python work, no generator in the way of the
device (the checkpoint writer must keep up with fio's sequential write).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from typing import Any

from kvgate.probes.agent.content import Pattern, cell_count
from kvgate.probes.agent.events import Cancelled, Progress
from kvgate.probes.agent.odirect import (
    O_DIRECT,
    DirectTracker,
    aligned_buffer,
    open_file,
    round_up,
    write_all,
)

CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL


class CellWriter:
    """Writes files of pattern cells; one instance per writing thread or process."""

    def __init__(self, pattern: Pattern, *, direct: bool, tracker: DirectTracker, align: int) -> None:
        self.pattern, self.direct, self.tracker, self.align = pattern, direct, tracker, align
        self.buf = aligned_buffer(pattern.cell_bytes + align)
        self.view = memoryview(self.buf)
        self._fill_body()

    def _fill_body(self) -> None:
        cell = self.pattern.cell_bytes
        self.pattern.fill(self.view, file_id=0, cell=0, length=cell)
        self._body_clean = True

    def _cell(self, file_id: int, cell: int, length: int) -> memoryview:
        """The buffer holding exactly that cell's bytes (re-filling after a short tail cell)."""
        if length == self.pattern.cell_bytes:
            if not self._body_clean:
                self._fill_body()
            self.pattern.stamp(self.view, file_id=file_id, cell=cell, length=length)
        else:
            self.pattern.fill(self.view, file_id=file_id, cell=cell, length=length)
            self._body_clean = False
        return self.view[:length]

    def write_file(
        self,
        path: str,
        size: int,
        *,
        file_id: int,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Create ``path`` (never overwriting), write ``size`` bytes of cells, fsync, close."""
        fd = open_file(path, CREATE, direct=self.direct, tracker=self.tracker)
        try:
            start = time.monotonic()
            fd = self.write_cells(fd, path, size, file_id=file_id, progress=progress, stop=stop)
            written = time.monotonic()
            os.fsync(fd)
            synced = time.monotonic()
        finally:
            os.close(fd)
        return {"bytes": size, "write_s": written - start, "fsync_s": synced - written}

    def write_cells(
        self,
        fd: int,
        path: str,
        size: int,
        *,
        file_id: int,
        base: int = 0,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
    ) -> int:
        """Write the cells of a ``size``-byte region at ``base``; returns the (maybe reopened) fd."""
        cell_bytes = self.pattern.cell_bytes
        for cell in range(cell_count(size, cell_bytes)):
            if stop is not None and stop.is_set():
                raise Cancelled("stopped while writing " + path)
            length = min(cell_bytes, size - cell * cell_bytes)
            data = self._cell(file_id, cell, length)
            fd = self._write(fd, path, data, base + cell * cell_bytes)
            if progress is not None:
                progress.add(length)
        if self._is_direct(fd) and size % self.align:
            os.ftruncate(fd, base + size)  # the tail went out rounded up to the alignment
        return fd

    def _is_direct(self, fd: int) -> bool:
        return bool(O_DIRECT and fcntl.fcntl(fd, fcntl.F_GETFL) & O_DIRECT)

    def _write(self, fd: int, path: str, data: memoryview, offset: int) -> int:
        """pwrite one cell; a direct write of a short tail goes out rounded up, then truncated."""
        if self.direct and len(data) % self.align and self._is_direct(fd):
            data = self.view[: round_up(len(data), self.align)]
        try:
            write_all(fd, data, offset)
        except OSError as exc:
            if exc.errno != errno.EINVAL or not self._is_direct(fd):
                raise
            os.close(fd)
            self.tracker.record(False, f"direct write failed with EINVAL ({exc.strerror}); buffered instead")
            fd = os.open(path, os.O_WRONLY)
            write_all(fd, data, offset)
        return fd
