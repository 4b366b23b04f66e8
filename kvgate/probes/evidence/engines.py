"""What an engine read from storage: summed over every process it started, or over its cgroup.

An engine is a process tree: vLLM V1 reads its tier in the EngineCore and GPU worker
processes, SGLang in its schedulers; the API server's own ``/proc/<pid>/io`` sees
none of it. kvgate starts engines under ``setsid``, so everything an engine started
shares its session: ``read_bytes`` of ``/proc/<pid>/io`` is summed over the session's
live processes (a child that exited was reaped into its parent's count). An engine in
a container is not in that session: its cgroup v2 ``io.stat`` (``rbytes``) counts
every process the container ran. On a host whose io controller is not on cgroup v2
(cgroup v1 or hybrid hosts, as older enterprise distributions ship) there is no
``io.stat``: the count falls back to the session of the container's init (the runtime
makes it a session leader), and the record says why.

>>> parse_io_stat("259:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\\n8:0 rbytes=10 wbytes=0\\n")
{'259:0': 4096, '8:0': 10}
"""

from __future__ import annotations

import os
from typing import Any

SCOPES = ("session", "cgroup")


class EngineGone(Exception):
    """The engine's leader process is not there (any more)."""


def _stat_fields(pid: str, proc_root: str) -> list[str] | None:
    """Fields of /proc/<pid>/stat after ``(comm)``: state, ppid, pgrp, session, …; None if gone."""
    try:
        with open(os.path.join(proc_root, pid, "stat")) as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def session_members(leader: int, *, proc_root: str = "/proc") -> list[int]:
    """Live processes of the session ``leader`` started (its pid is the session id under setsid)."""
    pids = []
    for entry in os.listdir(proc_root):
        fields = _stat_fields(entry, proc_root) if entry.isdigit() else None
        if fields and int(fields[3]) == leader and fields[0] not in ("Z", "X"):
            pids.append(int(entry))
    return sorted(pids)


def process_read_bytes(pid: int, *, proc_root: str = "/proc") -> int | None:
    """``read_bytes`` of /proc/<pid>/io (storage reads it caused); 0 once it exited, None: not readable.

    An exited child's count moves into its parent's when reaped, so the session's sum holds.
    """
    try:
        with open(os.path.join(proc_root, str(pid), "io")) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key == "read_bytes":
                    return int(value)
    except (FileNotFoundError, ProcessLookupError):
        return 0
    except (OSError, ValueError):
        return None
    return None


def process_reads(*, proc_root: str = "/proc", least: int = 1 << 20) -> dict[str, list[Any]]:
    """pid → [command name, read_bytes, start time] of every process that has read at least ``least``
    bytes from storage: two of these name a window's busiest readers (a reader asked who else read the
    device). A process is known by its pid and start time: a kernel worker renames itself by the work it
    runs (kworker/u8:1-writeback, then kworker/u8:1-kvfree_rcu_reclaim), a reused pid starts anew."""
    out: dict[str, list[Any]] = {}
    for entry in os.listdir(proc_root):
        got = process_read_bytes(int(entry), proc_root=proc_root) if entry.isdigit() else None
        fields = _stat_fields(entry, proc_root) if got is not None and got >= least else None
        if not fields or len(fields) < 20:  # too few bytes, or gone in between
            continue
        try:
            with open(os.path.join(proc_root, entry, "comm")) as f:
                out[entry] = [f.read().strip(), got, int(fields[19])]
        except (OSError, ValueError):
            continue
    return out


def parse_io_stat(text: str) -> dict[str, int]:
    """cgroup v2 ``io.stat`` → {MAJ:MIN: rbytes}."""
    out = {}
    for line in text.splitlines():
        dev, *pairs = line.split()
        values = dict(p.split("=", 1) for p in pairs if "=" in p)
        if values.get("rbytes", "").isdigit():
            out[dev] = int(values["rbytes"])
    return out


def cgroup2_root(*, proc_root: str = "/proc") -> str | None:
    """Where cgroup v2 is mounted (``/sys/fs/cgroup``, or ``…/unified`` on a hybrid host); None: nowhere."""
    try:
        with open(os.path.join(proc_root, "self", "mountinfo")) as f:
            for line in f:
                fields, _, fs = line.partition(" - ")
                if fs.split(" ", 1)[0] == "cgroup2":
                    return fields.split()[4]
    except OSError:
        return None
    return None


def cgroup_path(pid: int, *, proc_root: str = "/proc") -> str:
    """The cgroup v2 path of ``pid`` (the ``0::`` line of /proc/<pid>/cgroup)."""
    try:
        with open(os.path.join(proc_root, str(pid), "cgroup")) as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        raise EngineGone(f"process {pid} is gone") from None
    raise EngineGone(f"process {pid} is in no cgroup v2 (no 0:: line in /proc/{pid}/cgroup)")


def cgroup_pids(pid: int, *, proc_root: str = "/proc", cgroup_root: str | None = None) -> list[int]:
    """Every process of ``pid``'s cgroup v2 (``cgroup.procs``): a container's, from its init."""
    root = cgroup_root or cgroup2_root(proc_root=proc_root)
    if root is None:
        raise EngineGone("no cgroup v2 on this host: a container's processes cannot be found")
    where = os.path.join(root, cgroup_path(pid, proc_root=proc_root).lstrip("/"), "cgroup.procs")
    try:
        with open(where) as f:
            return sorted(int(line) for line in f if line.strip())
    except OSError:  # the container ended meanwhile
        raise EngineGone(f"the cgroup of process {pid} is gone") from None


def engine_reads(
    leader: int,
    scope: str,
    *,
    volume_devices: tuple[str, ...] = (),
    block_volume: bool = True,
    proc_root: str = "/proc",
    cgroup_root: str | None = None,
) -> dict[str, Any]:
    """{read_bytes, processes, scope, where} of one engine now; raises EngineGone without its leader.

    ``volume_devices``: ``MAJ:MIN`` of the volume's devices; on ``io.stat`` the engine's reads of
    those alone are its ``volume_read_bytes`` (a container also reads its programs and libraries
    from the root disk: 0.5 MB of a 64 MiB restore on the lab). A session's ``/proc/<pid>/io``
    cannot tell devices apart. ``block_volume`` False (NFS): ``io.stat`` counts block devices only
    and never sees the engine's reads of the share (the lab: 0.2 MB of a 32 MiB read, while the
    init's ``read_bytes`` had them all), so the count is the session's. ``cgroup_root``: where
    cgroup v2 is mounted (default: mountinfo).
    """
    if _stat_fields(str(leader), proc_root) is None:
        raise EngineGone(f"engine process {leader} is gone")
    if scope != "cgroup":
        return _session_reads(leader, proc_root)
    group = cgroup_path(leader, proc_root=proc_root)
    root = cgroup_root or cgroup2_root(proc_root=proc_root)
    where = os.path.join(root, group.lstrip("/")) if root else None
    if not block_volume or where is None or not os.path.exists(os.path.join(where, "io.stat")):
        reads = _session_reads(leader, proc_root)
        why = (
            "io.stat counts block devices only, and the volume is NFS"
            if not block_volume
            else f"cgroup {group} has no io.stat (the io controller is not on cgroup v2 here)"
        )
        reads["fallback"] = f"{why}: counted over the session of the container's init {leader}"
        return reads
    with open(os.path.join(where, "io.stat")) as f:
        per_device = parse_io_stat(f.read())
    count = len(cgroup_pids(leader, proc_root=proc_root, cgroup_root=root))
    reads = {
        "read_bytes": sum(per_device.values()),
        "processes": count,
        "scope": scope,
        "where": group,
        "per_device": per_device,
    }
    if volume_devices:
        reads["volume_read_bytes"] = sum(per_device.get(d, 0) for d in volume_devices)
    return reads


def _session_reads(leader: int, proc_root: str) -> dict[str, Any]:
    members = session_members(leader, proc_root=proc_root)
    reads = [process_read_bytes(p, proc_root=proc_root) for p in members]
    unreadable = [p for p, r in zip(members, reads) if r is None]  # noqa: B905 - python 3.8 zip takes no strict
    return {
        "read_bytes": None if unreadable else sum(r or 0 for r in reads),
        "processes": len(members),
        "scope": "session",
        "where": f"session {leader}: {' '.join(str(p) for p in members)}",
        "unreadable": unreadable,
    }
