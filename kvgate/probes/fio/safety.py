"""Data safety: fio writes only to declared scratch targets (DESIGN rule 3).

The check runs on the job file fio will read, byte for byte: :func:`check_jobfile`
parses the rendered text back the way fio does (one option per line, ``;``/``#``
comments, ``[section]`` headers) and refuses any option kvgate does not render, an
``include``, a ``$`` expansion, a control character, a line fio would read in two
pieces, and any number of ``filename=``/``directory=`` lines other than one (fio
obeys the last: a second target is refused, not ignored). Only then is the target
checked on the host, before anything is created there.

A file target must pass the scratch check (:mod:`kvgate.probes.scratch`: under a volume
marked scratch after resolving symlinks on the host; fio lays out its files, i.e.
writes them, even for read jobs). A raw block device may be read when it is the
volume's declared device; it may be written only when the volume is scratch,
nothing on it is mounted (itself, a partition, a holder), no signature is found on
it or under it (``blkid -p``: filesystem, RAID/LVM member, partition table), and
the run passes ``allow_destructive``. Every broken rule is listed in the refusal.

>>> parse_jobfile("[global]\\nrw=read\\n[j]\\ndirectory=/mnt/s\\ndirectory=/etc\\n")  # doctest: +ELLIPSIS
Traceback (most recent call last):
kvgate.probes.fio.safety.UnsafeTarget: refused fio target job file: 2 target lines (directory=/mnt/s, ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kvgate.configuration.fio_job import (
    IOENGINES,
    JOBFILE_OPTIONS,
    READ_MODES,
    TARGET_OPTIONS,
    WRITE_MODES,
    target_problem,
)
from kvgate.configuration.inventory import Volume
from kvgate.probes.scratch import UnsafeWrite, resolve, write_refusals
from kvgate.transport import Executor

MAX_LINE_CHARS = 4000  # fio reads a job file line with fgets(4095): a longer one is read as two
_SECTION = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9_.-]*)\]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class UnsafeTarget(UnsafeWrite):
    """A fio job was refused because it could destroy data; str() lists every broken rule."""

    what = "refused fio target"


@dataclass(frozen=True)
class JobfileView:
    """What a job file makes fio do, as far as safety is concerned."""

    target: str
    writes: bool  # fio writes the target: a write mode, or laying the files out


@dataclass(frozen=True)
class SafeJobfile:
    """The exact job file text that :func:`check_jobfile` passed on a host, and its target."""

    text: str
    target: str
    writes: bool


def parse_jobfile(text: str) -> JobfileView:
    """Read a job file back as fio would; raise UnsafeTarget listing every line kvgate would not render."""
    problems, targets, modes, layout = [], [], [], False
    section: str | None = None
    seen: set[str] = set()
    for n, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_LINE_CHARS or _CONTROL.search(line):
            problems.append(f"line {n} is over {MAX_LINE_CHARS} characters or has a control character")
            continue
        stripped = line.strip(" ")
        if not stripped or stripped[0] in ";#":
            continue
        if stripped.startswith("["):
            section = _section(stripped, n, seen, problems)
            continue
        key, _, value = (part.strip(" ") for part in stripped.partition("="))
        problems += _option_problems(key, value, n, section)
        targets += [f"{key}={value}"] if key in TARGET_OPTIONS else []
        modes += [value] if key == "rw" else []
        layout = layout or (key == "create_only" and value == "1")
    problems += _target_problems(targets) + [
        f"unknown rw={m}" for m in modes if m not in READ_MODES | WRITE_MODES
    ]
    if problems:
        raise UnsafeTarget("job file", problems)
    return JobfileView(targets[0].partition("=")[2], layout or any(m in WRITE_MODES for m in modes))


def _section(header: str, n: int, seen: set[str], problems: list[str]) -> str | None:
    m = _SECTION.fullmatch(header)
    if m is None or m[1] in seen:
        problems.append(f"line {n}: {header!r} is not a new [section] header")
        return None
    seen.add(m[1])
    return m[1]


def _option_problems(key: str, value: str, n: int, section: str | None) -> list[str]:
    if key not in JOBFILE_OPTIONS:
        return [f"line {n}: option {key!r} is not one kvgate renders (it may name a file or run a command)"]
    if section is None or (section == "global" and key in TARGET_OPTIONS):
        return [f"line {n}: {key} outside a job section"]
    if key == "ioengine" and value not in IOENGINES:
        return [f"line {n}: ioengine={value} is not one that only reads and writes its target"]
    return [f"line {n}: {key}={value} expands '$'"] if "$" in value else []


def _target_problems(targets: list[str]) -> list[str]:
    if len(targets) != 1:
        named = f" ({', '.join(targets)})" if targets else ""
        return [f"{len(targets)} target lines{named}: fio would obey the last; exactly one is allowed"]
    problem = target_problem(targets[0].partition("=")[2])
    return [problem] if problem else []


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


def check_jobfile(
    ex: Executor, text: str, volume: Volume, *, allow_destructive: bool = False, sudo: bool = False
) -> SafeJobfile:
    """Raise UnsafeTarget unless the job file ``text`` may run against ``volume`` on this host."""
    view = parse_jobfile(text)
    [resolved] = resolve(ex, view.target)
    if ex.run("test -b %s", resolved).ok:
        facts = probe_device(ex, resolved, sudo=sudo)
        kw = {"writes": view.writes, "allow_destructive": allow_destructive}
        reasons = device_refusals(facts, volume=_declared(ex, volume, resolved), **kw)
    else:
        reasons = write_refusals(ex, volume, view.target)
    if reasons:
        raise UnsafeTarget(view.target, reasons)
    return SafeJobfile(text, view.target, view.writes)


def _declared(ex: Executor, volume: Volume, resolved: str) -> Volume | None:
    """The volume when the target is its declared device (compared after resolving links)."""
    return volume if volume.device and resolve(ex, volume.device)[0] == resolved else None
