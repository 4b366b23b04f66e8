"""The counter sanity probe: before any cold number on a volume is trusted, its counters must move.

An O_DIRECT read of N MiB from the volume must move the counters that stand for it
(the resolved devices, or the NFS client's server reads) by at least N MiB. When
they do not — a multipath head without accounting that was not resolved, a volume
on a device kvgate cannot see — every cold proof on the volume would come out
INVALID for hours; the probe says so in minutes, naming the devices.

On a scratch volume the probe writes its own file (and removes it); on any other it
reads the largest regular file it finds near the top of the volume, and writes nothing.
"""

from __future__ import annotations

import mmap
import os
import secrets
from typing import Any

from kvgate.probes.evidence.blockdev import Resolved
from kvgate.probes.evidence.window import Counts, snapshot

MIB = 1 << 20
DEFAULT_MIB = 64  # enough to stand above a busy device's background reads; seconds on any array
SEARCH_LIMIT = 2000  # directory entries looked at for a file to read on a read-only volume
O_DIRECT = getattr(os, "O_DIRECT", 0)


def probe(volume: Resolved, directory: str, *, mib: int, scratch: bool) -> dict[str, Any]:
    """Read ``mib`` MiB O_DIRECT from ``directory``'s volume and report whether its counters saw it."""
    made = _write_file(directory, mib) if scratch else None
    target = made or _existing_file(directory, mib * MIB)
    if target is None:
        return _result(volume, None, None, f"no file of {mib} MiB to read under {directory} (not scratch)")
    try:
        before = snapshot(volume)
        read = _read_direct(target, mib * MIB)
        counts = Counts.between(before, snapshot(volume))
    except OSError as exc:
        return _result(volume, target, None, f"O_DIRECT read of {target} failed: {exc.strerror}")
    finally:
        if made:
            os.unlink(made)
    moved = counts.device_read_bytes
    why = None
    if moved is None:
        why = (
            f"nothing counts reads of {volume.mount_point} ({volume.fstype}): no block device, no NFS counter"
        )
    elif moved < read:
        why = (
            f"{counts.counted_on} moved by {moved} B for an O_DIRECT read of {read} B: these counters "
            f"do not see this volume's reads, so no cold read on it can be proven"
        )
    return _result(volume, target, counts, why, read)


def _result(
    volume: Resolved, target: str | None, counts: Counts | None, why: str | None, read: int = 0
) -> dict[str, Any]:
    return {
        "volume": volume.to_json(),
        "how": volume.how,
        "file": target,
        "read_bytes": read,
        "counts": counts.to_json() if counts else None,
        "ok": why is None,
        "reason": why,
    }


def _write_file(directory: str, mib: int) -> str:
    """A file of ``mib`` MiB of random bytes, synced to the device."""
    path = os.path.join(directory, f".kvgate-counter-probe-{secrets.token_hex(4)}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        chunk = os.urandom(MIB)
        for _ in range(mib):
            os.write(fd, chunk)
        os.fsync(fd)
    finally:
        os.close(fd)
    return path


def _existing_file(directory: str, size: int) -> str | None:
    """The largest regular file of at least ``size`` bytes among the first entries under ``directory``."""
    best: tuple[int, str] | None = None
    seen = 0
    for root, _dirs, files in os.walk(directory):
        for name in files:
            seen += 1
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            if st.st_size >= size and (best is None or st.st_size > best[0]):
                best = (st.st_size, path)
        if seen >= SEARCH_LIMIT:
            break
    return best[1] if best else None


def _read_direct(path: str, size: int) -> int:
    """Read ``size`` bytes from the start of ``path`` with O_DIRECT into an aligned buffer."""
    buf = mmap.mmap(-1, MIB)  # page aligned: what O_DIRECT needs on every device up to 4 KiB sectors
    fd = os.open(path, os.O_RDONLY | O_DIRECT)
    done = 0
    try:
        while done < size:
            n = os.preadv(fd, [buf], done)
            if n <= 0:
                break
            done += n
    finally:
        os.close(fd)
        buf.close()
    return done
