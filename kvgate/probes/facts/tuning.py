"""Host tuning the engines depend on: /dev/shm size, the kernel command line, NUMA
balancing and the groups of the user kvgate logs in as.

AMD's MI300X system optimization guide (ROCm/ROCm `docs/how-to/system-optimization/mi300x.rst`,
"GRUB settings" and "Disable NUMA auto-balancing") asks for `iommu=pt` (and `pci=realloc=off`)
on the kernel command line and /proc/sys/kernel/numa_balancing = 0; ROCm needs the user in
`video` and `render` for /dev/kfd and /dev/dri; vLLM and SGLang pass tensors through /dev/shm.

>>> parse_cmdline("BOOT_IMAGE=/vmlinuz ro iommu=pt amd_iommu=on\\n")
['BOOT_IMAGE=/vmlinuz', 'ro', 'iommu=pt', 'amd_iommu=on']
"""

from __future__ import annotations

from typing import Any

from kvgate.probes.facts.base import (
    Collected,
    HostContext,
    ParseError,
    guard,
    int_or_none,
    run_parsed,
    run_text,
)
from kvgate.probes.facts.mounts import parse_df
from kvgate.transport import Executor


def parse_cmdline(text: str) -> list[str]:
    """The tokens of /proc/cmdline."""
    tokens = text.split()
    if not tokens:
        raise ParseError("/proc/cmdline", "a non-empty kernel command line", text)
    return tokens


def parse_numa_balancing(text: str) -> int:
    """/proc/sys/kernel/numa_balancing: 0 off, 1 normal, 2 memory tiering (kernel >= 6.0)."""
    value = int_or_none(text)
    if value is None:
        raise ParseError("/proc/sys/kernel/numa_balancing", "an integer", text)
    return value


def parse_groups(text: str) -> dict[str, Any]:
    """`id -un; id -nG`: the user and the names of its groups."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) != 2:
        raise ParseError("id", "a user name line and a group names line", text)
    return {"user": lines[0], "groups": lines[1].split()}


def _shm(text: str) -> dict[str, Any]:
    return {"shm_bytes": parse_df(text)["size_bytes"]}


def collect(ex: Executor, ctx: HostContext) -> Collected:
    """Each setting is its own sub-probe: one that cannot be read does not hide the others."""
    del ctx  # nothing host-specific to pass
    col = Collected()
    shm = run_parsed(ex, col, "/dev/shm", _shm, "df -P -B1 /dev/shm", timeout_s=15)
    cmdline = run_text(ex, col, "cmdline", "cat /proc/cmdline", timeout_s=10)
    balancing = run_text(ex, col, "numa_balancing", "cat /proc/sys/kernel/numa_balancing", timeout_s=10)
    groups = run_parsed(ex, col, "groups", parse_groups, "id -un; id -nG", timeout_s=10)
    col.facts.update(shm or {})
    col.facts["cmdline"] = guard(col, "cmdline", parse_cmdline, cmdline)
    col.facts["numa_balancing"] = guard(col, "numa_balancing", parse_numa_balancing, balancing)
    col.facts.update(groups or {})
    return col
