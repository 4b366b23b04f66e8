"""Data safety: fio writes only to declared scratch targets (DESIGN rule 3).

A file target must resolve, on the host, to a path under its volume's directory,
and the volume must be marked scratch (fio lays out its files, i.e. writes them,
even for read jobs). A raw block device may be read when it is the volume's
declared device; it may be written only when the volume is scratch, nothing on
it is mounted (itself, a partition, a holder), no signature is found on it or
under it (``blkid -p``: filesystem, RAID/LVM member, partition table), and the
run passes ``allow_destructive``. Every broken rule is listed in the refusal.

>>> from kvgate.inventory.schema import Volume
>>> vol = Volume(path="/mnt/scratch", kind="candidate", scratch=True)
>>> file_refusals(vol, "/mnt/scratch/../etc", resolved="/mnt/etc", volume_resolved="/mnt/scratch")[0]
"target /mnt/scratch/../etc contains '..': path traversal is refused"
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kvgate.errors import UsageError
from kvgate.fio.job import FioJob
from kvgate.inventory.schema import Volume
from kvgate.transport.base import Executor


class UnsafeTarget(UsageError):
    """A fio job was refused because it could destroy data; str() lists every broken rule."""

    def __init__(self, target: str, reasons: list[str]) -> None:
        self.target, self.reasons = target, tuple(reasons)
        super().__init__(f"refused fio target {target}: " + "; ".join(reasons))


@dataclass(frozen=True)
class DeviceFacts:
    """What the host says about a block device and everything stacked on it."""

    device: str
    nodes: tuple[str, ...]  # the device, its partitions and holders (lsblk tree)
    mounts: tuple[tuple[str, str], ...]  # (node, mountpoint)
    signatures: tuple[tuple[str, str], ...]  # (node, blkid -p output)
    probe_errors: tuple[str, ...] = ()  # a node that could not be probed cannot be proven blank


def lsblk_tree(doc: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every node of ``lsblk -J`` output, depth first."""
    stack = list(doc.get("blockdevices", []))
    while stack:
        node = stack.pop(0)
        yield node
        stack[:0] = node.get("children", [])


def parse_lsblk(text: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """``lsblk -J -p -o NAME,MOUNTPOINTS`` → (nodes, (node, mountpoint) pairs)."""
    nodes = list(lsblk_tree(json.loads(text)))
    names = tuple(str(n["name"]) for n in nodes)
    mounts = tuple((str(n["name"]), str(m)) for n in nodes for m in _mountpoints(n) if m)
    return names, mounts


def _mountpoints(node: Mapping[str, Any]) -> list[Any]:
    return list(node.get("mountpoints") or []) + ([node["mountpoint"]] if node.get("mountpoint") else [])


def probe_device(ex: Executor, device: str, *, sudo: bool = False) -> DeviceFacts:
    """lsblk for the tree and mounts, ``blkid -p`` (low-level, no cache) on every node."""
    tree = ex.run("lsblk -J -p -o NAME,MOUNTPOINTS %s", device, sudo=sudo)
    if not tree.ok:
        return DeviceFacts(device, (), (), (), (f"lsblk {device}: {tree.tail(3)}",))
    nodes, mounts = parse_lsblk(tree.stdout)
    signatures, errors = [], []
    for node in nodes:
        probe = ex.run("blkid -p %s", node, sudo=sudo)
        if probe.exit_status == 0:
            signatures.append((node, probe.stdout.strip().removeprefix(f"{node}: ")))
        elif probe.exit_status != 2 or probe.stderr.strip():  # 2 and silent: nothing found
            errors.append(f"blkid -p {node} exited {probe.exit_status}: {probe.tail(2)}")
    return DeviceFacts(device, nodes, mounts, tuple(signatures), tuple(errors))


def device_refusals(
    facts: DeviceFacts, *, volume: Volume | None, writes: bool, allow_destructive: bool
) -> list[str]:
    """Why fio may not use this raw device (``volume`` None: not the volume's declared device)."""
    if volume is None:
        return [f"{facts.device} is not the declared device of the volume"]
    if not writes:
        return []
    reasons = [] if volume.scratch else [f"volume {volume.path} ({facts.device}) is not marked scratch"]
    reasons += [f"{node} is mounted on {where}" for node, where in facts.mounts]
    reasons += [f"{node} carries a signature ({what})" for node, what in facts.signatures]
    reasons += [f"cannot prove {facts.device} blank: {err}" for err in facts.probe_errors]
    if not allow_destructive:
        reasons.append("a destructive write to a raw device needs the explicit allow-destructive option")
    return reasons


def file_refusals(volume: Volume, target: str, *, resolved: str, volume_resolved: str) -> list[str]:
    """Why fio may not use this file/directory target; empty when it may."""
    if not posixpath.isabs(target):
        return [f"target {target} is not an absolute path"]
    if ".." in target.split("/"):
        return [f"target {target} contains '..': path traversal is refused"]
    reasons = []
    if not _under(posixpath.normpath(target), posixpath.normpath(volume.path)):
        reasons.append(f"target {target} is outside the volume directory {volume.path}")
    elif not _under(resolved, volume_resolved):
        reasons.append(f"target {target} resolves to {resolved}, outside {volume_resolved} (symlink)")
    if not volume.scratch:
        reasons.append(f"volume {volume.path} is not marked scratch (fio lays out its files even to read)")
    return reasons


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def check_job(
    ex: Executor, job: FioJob, volume: Volume, *, allow_destructive: bool = False, sudo: bool = False
) -> None:
    """Raise UnsafeTarget unless ``job`` may run against ``volume`` on this host."""
    resolved = _realpath(ex, job.target)
    if ex.run("test -b %s", resolved).ok:
        facts = probe_device(ex, resolved, sudo=sudo)
        kw = {"writes": job.writes, "allow_destructive": allow_destructive}
        reasons = device_refusals(facts, volume=_declared(ex, volume, resolved), **kw)
    else:
        reasons = file_refusals(
            volume, job.target, resolved=resolved, volume_resolved=_realpath(ex, volume.path)
        )
    if reasons:
        raise UnsafeTarget(job.target, reasons)


def _declared(ex: Executor, volume: Volume, resolved: str) -> Volume | None:
    """The volume when the target is its declared device (compared after resolving links)."""
    return volume if volume.device and _realpath(ex, volume.device) == resolved else None


def _realpath(ex: Executor, path: str) -> str:
    """The host's canonical path (symlinks resolved, missing tail allowed)."""
    return ex.run("realpath -m %s", path, check=True).stdout.strip()
