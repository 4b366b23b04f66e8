"""Read buffers: exact size, page aligned, and huge-page backed where the kernel allows it.

A direct read leaves as one device request per run of physically contiguous
buffer pages (at most max_segments runs each): into 4 KiB pages an 8 MiB read
was ~10 requests of <=1 MiB on this VM's virtio disk, into 2 MiB pages two of 4 MiB.
"""

import ctypes
import os
import re
from pathlib import Path

import pytest

from kvgate.probes.agent.odirect import HUGE_PAGE, aligned_buffer

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def address(view: memoryview) -> int:
    return ctypes.addressof(ctypes.c_char.from_buffer(view))


def smaps_entry(addr: int) -> str:
    """The /proc/self/smaps block of the mapping that holds ``addr``."""
    blocks = Path("/proc/self/smaps").read_text().split("\n")
    for i, line in enumerate(blocks):
        span = line.split(" ", 1)[0]
        if "-" in span and all(c in "0123456789abcdef-" for c in span):
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= addr < hi:
                return "\n".join(blocks[i : i + 30])
    raise AssertionError(f"no mapping holds {addr:#x}")


def test_a_small_buffer_is_exactly_its_size_page_aligned_and_zeroed() -> None:
    buf = aligned_buffer(5000)
    assert len(buf) == 8192
    assert address(buf) % 4096 == 0
    assert bytes(buf) == bytes(8192)
    buf.release()


def test_a_large_read_buffer_starts_on_a_huge_page_and_may_use_them() -> None:
    size = (8 << 20) + 2 * 4096  # an 8 MiB cell plus alignment slack, as CellReader asks
    buf = aligned_buffer(size)
    assert len(buf) == size
    assert address(buf) % HUGE_PAGE == 0
    buf[:] = bytes(size)
    if "[never]" in (THP.read_text() if THP.exists() else "[never]"):
        pytest.skip("transparent huge pages are off on this kernel")
    entry = smaps_entry(address(buf))
    assert re.search(r"^THPeligible:\s+1$", entry, re.M), entry  # private and advised: a shared map never is
    buf.release()


def test_direct_reads_land_in_the_buffer(tmp_path: Path) -> None:
    data = os.urandom(3 << 20)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    buf = aligned_buffer(len(data))
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    try:
        assert os.preadv(fd, [buf], 0) == len(data)
    finally:
        os.close(fd)
    assert bytes(buf) == data
    buf.release()
