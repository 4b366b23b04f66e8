"""O_DIRECT I/O with aligned buffers; a fallback to buffered I/O is counted and reported, never silent.

Buffers come from anonymous mmap (page aligned); offsets and lengths are
rounded to the alignment: the larger of the device's logical block size and
4096 (LMCache #4386: probe both, report the errno).

>>> buf = aligned_buffer(1 << 20)
>>> len(buf) >= 1 << 20 and alignment_for("/") >= 4096
True
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import threading
from typing import Any

MIN_ALIGN = 4096
O_DIRECT = getattr(os, "O_DIRECT", 0)


def aligned_buffer(size: int) -> mmap.mmap:
    """A page-aligned, zero-filled anonymous buffer of at least ``size`` bytes."""
    return mmap.mmap(-1, round_up(max(size, 1), mmap.PAGESIZE))


def round_up(n: int, align: int) -> int:
    """``n`` rounded up to a multiple of ``align``."""
    return -(-n // align) * align


def alignment_for(path: str) -> int:
    """max(logical block size of the device behind ``path``, 4096); 4096 when unknown."""
    try:
        dev = os.stat(path).st_dev
        base = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"
        for candidate in (base + "/queue/logical_block_size", base + "/../queue/logical_block_size"):
            if os.path.exists(candidate):
                with open(candidate) as f:
                    return max(MIN_ALIGN, int(f.read().strip()))
    except (OSError, ValueError):
        pass
    return MIN_ALIGN


class DirectTracker:
    """Counts opens that engaged O_DIRECT and those that fell back, with the first reason."""

    def __init__(self, requested: bool) -> None:
        self.requested = requested
        self.engaged_opens = 0
        self.fallback_opens = 0
        self.fallback_reason: str | None = None
        self._lock = threading.Lock()

    def record(self, engaged: bool, reason: str | None) -> None:
        """Note the outcome of one open (or one failed first read)."""
        with self._lock:
            if engaged:
                self.engaged_opens += 1
            elif self.requested:
                self.fallback_opens += 1
                self.fallback_reason = self.fallback_reason or reason

    def report(self) -> dict[str, Any]:
        """The ``direct_*`` fields of a result."""
        return {
            "direct_requested": self.requested,
            "direct_engaged": self.requested and self.fallback_opens == 0 and self.engaged_opens > 0,
            "direct_engaged_opens": self.engaged_opens,
            "direct_fallback_opens": self.fallback_opens,
            "direct_fallback_reason": self.fallback_reason,
        }


def open_file(path: str, flags: int, *, direct: bool, tracker: DirectTracker, mode: int = 0o644) -> int:
    """Open with O_DIRECT when asked; on EINVAL fall back to buffered and record why."""
    if direct and O_DIRECT:
        try:
            fd = os.open(path, flags | O_DIRECT, mode)
        except OSError as exc:
            if exc.errno != errno.EINVAL:
                raise
            tracker.record(False, f"open(O_DIRECT) failed: EINVAL ({exc.strerror})")
        else:
            if fcntl.fcntl(fd, fcntl.F_GETFL) & O_DIRECT:
                tracker.record(True, None)
                return fd
            tracker.record(False, "the file system cleared O_DIRECT from the open flags")
            return fd
    elif direct:
        tracker.record(False, "O_DIRECT is not available on this platform")
    return os.open(path, flags, mode)


def pread_into(fd: int, view: memoryview, offset: int) -> int:
    """Fill ``view`` from ``offset``; returns the bytes read (fewer only at end of file)."""
    got = 0
    while got < len(view):
        n = os.preadv(fd, [view[got:]], offset + got)
        if n == 0:
            break
        got += n
    return got


def read_range(fd: int, buf: Any, offset: int, length: int, align: int) -> memoryview:
    """Read ``[offset, offset+length)`` with aligned I/O into ``buf``; returns exactly those bytes."""
    start = offset - offset % align
    end = round_up(offset + length, align)
    view = memoryview(buf)
    if end - start > len(view):
        raise ValueError(f"buffer of {len(view)} bytes too small for an aligned read of {end - start}")
    got = pread_into(fd, view[: end - start], start)
    if got < offset + length - start:
        raise OSError(errno.EIO, f"short read: file ends at {start + got}, expected {end} bytes")
    return view[offset - start : offset - start + length]


def write_all(fd: int, view: memoryview, offset: int) -> None:
    """Write all of ``view`` at ``offset`` (pwritev until done)."""
    done = 0
    while done < len(view):
        done += os.pwritev(fd, [view[done:]], offset + done)


def reopen_buffered(path: str, flags: int, fd: int, tracker: DirectTracker, exc: OSError) -> int:
    """After an EINVAL on the first direct I/O: close, reopen buffered, record the reason."""
    os.close(fd)
    tracker.record(False, f"direct I/O failed with EINVAL ({exc.strerror}); buffered instead")
    return os.open(path, flags)
