"""O_DIRECT I/O with aligned buffers; a fallback to buffered I/O is counted and reported, never silent.

Buffers come from private anonymous mmap, huge-page aligned and advised
(MADV_HUGEPAGE) where the kernel allows it; offsets and lengths are rounded to
the alignment: the larger of the device's logical block size and 4096
(LMCache #4386: probe both, report the errno).

Why huge pages: a direct read goes to the device as one request per run of
physically contiguous buffer pages, at most ``max_segments`` (often 128-254)
runs per request. Into scattered 4 KiB pages an 8 MiB read leaves as ~10
requests of ≤1 MiB; into 2 MiB pages as two of 4 MiB (``max_sectors_kb``),
which is what fio's buffers get. On a virtio disk that was 0.7-0.9 vs
1.7-2.0 GiB/s for one reader.

>>> buf = aligned_buffer(1 << 20)
>>> len(buf) == 1 << 20 and alignment_for("/") >= 4096
True
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import threading
from typing import Any

MIN_ALIGN = 4096
HUGE_PAGE = 2 << 20  # x86-64 and arm64 (4 KiB base pages) PMD size
O_DIRECT = getattr(os, "O_DIRECT", 0)


def aligned_buffer(size: int) -> memoryview:
    """``size`` bytes of zero-filled anonymous memory, page aligned, huge-page aligned where it can be.

    The memory is unmapped once the view is released and no slice of it is left.
    """
    size = round_up(max(size, 1), mmap.PAGESIZE)
    advise = getattr(mmap, "MADV_HUGEPAGE", None)
    slack = HUGE_PAGE if advise is not None and size >= HUGE_PAGE else 0
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    mem = mmap.mmap(-1, size + slack, flags=flags) if flags else mmap.mmap(-1, size + slack)
    if advise is not None and slack:
        with contextlib.suppress(OSError):  # a kernel without THP: 4 KiB pages, correct, more requests
            mem.madvise(advise)
    start = -address_of(mem) % HUGE_PAGE if slack else 0
    return memoryview(mem)[start : start + size]


def address_of(mem: mmap.mmap) -> int:
    """The virtual address of an mmap (0 when ctypes is missing: then no huge-page alignment)."""
    try:
        import ctypes
    except ImportError:
        return 0
    return ctypes.addressof(ctypes.c_char.from_buffer(mem))


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
