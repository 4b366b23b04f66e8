"""An NFS mount's client counters and options, from ``/proc/self/mountstats``.

NFS has no local block device: its cold proof is the client's own count of bytes
read from the server (``bytes:`` field 5, ``serverreadbytes``), as opposed to bytes
the application read (fields 1 and 3, normal and O_DIRECT), which the page cache can
serve. The server's own cache is not visible here: kvgate either drops it on the
server (the volume names its server host) or says the result carries that limit.

>>> m = parse_mountstats(SAMPLE)["/mnt/nfs"]
>>> m.server_read_bytes, m.options["vers"], m.options["nconnect"]
(4096, '4.2', '8')
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

# the mount options a report shows (nfs(5)); the rest stay in the raw artifact
OPTIONS = ("vers", "rsize", "wsize", "nconnect", "proto", "hard", "soft", "timeo", "retrans", "addr")
BYTES_FIELDS = (
    "normal_read",
    "normal_write",
    "direct_read",
    "direct_write",
    "server_read",
    "server_write",
    "read_pages",
    "write_pages",
)
SAMPLE = (
    "device srv:/export mounted on /mnt/nfs with fstype nfs4 statvers=1.1\n"
    "\topts:\trw,vers=4.2,rsize=1048576,wsize=1048576,nconnect=8,proto=tcp\n"
    "\tbytes:\t8192 0 0 0 4096 0 2 0\n"
)


@dataclass(frozen=True)
class NfsMount:
    """One NFS mount as its client sees it."""

    mount_point: str
    source: str
    fstype: str
    options: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # the ``bytes:`` line, BYTES_FIELDS

    @property
    def server_read_bytes(self) -> int:
        return self.counts.get("server_read", 0)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_mountstats(text: str) -> dict[str, NfsMount]:
    """Every NFS mount in a mountstats text, by mount point (other file systems are skipped)."""
    mounts: dict[str, NfsMount] = {}
    current: NfsMount | None = None
    for line in text.splitlines():
        if line.startswith("device "):
            current = _device_line(line)
            if current is not None:
                mounts[current.mount_point] = current
        elif current is not None:
            key, _, value = line.strip().partition(":")
            if key == "opts":
                current.options.update(_options(value.strip()))
            elif key == "bytes":
                numbers = value.split()
                if len(numbers) >= 6 and all(n.isdigit() for n in numbers):
                    current.counts.update(zip(BYTES_FIELDS, (int(n) for n in numbers)))  # noqa: B905 - python 3.8 zip takes no strict
    return mounts


def _device_line(line: str) -> NfsMount | None:
    """``device SRC mounted on POINT with fstype TYPE ...`` → an empty NfsMount (NFS only)."""
    head, sep, tail = line[len("device ") :].partition(" mounted on ")
    point, sep2, rest = tail.rpartition(" with fstype ")
    fstype = rest.split()[0] if rest.split() else ""
    if not (sep and sep2) or not fstype.startswith("nfs"):
        return None
    return NfsMount(point.replace("\\040", " "), head, fstype)


def _options(text: str) -> dict[str, str]:
    out = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        if key in OPTIONS:
            out[key] = value or "yes"
    return out


def mount(point: str, *, proc_root: str = "/proc") -> NfsMount | None:
    """The NFS mount at ``point`` now, or None when none is there."""
    with open(os.path.join(proc_root, "self", "mountstats")) as f:
        return parse_mountstats(f.read()).get(point)
