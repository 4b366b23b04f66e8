"""G1 arrival facts: collectors that run over an Executor and pure parsers, one module per tool family.

A family's failure (a missing tool, a failed command, output a parser does not
understand) is recorded in its `Collected` and never stops the other families;
only a TransportError (host unreachable, connection dropped) and Interrupted
(Ctrl-C) propagate: an interrupted probe is not a fact, so no family records one.

    base.py      the contract: what a collector gets (HostContext) and returns (Collected)
    cpu.py       CPU model, sockets and cores from ``lscpu -J`` (both layouts, several core types)
    memory.py    /proc/meminfo, in bytes
    osinfo.py    /etc/os-release and ``uname -r``
    block.py     block devices from ``lsblk -J -b`` (a device with several parents listed once)
    mounts.py    each volume's mount (``findmnt -J -T``) and free bytes (``df -P -B1``)
    nvme.py      nvme-cli JSON: list, smart-log (°C), list-subsys; local PCIe namespaces vs NVMe-oF
    nvmeof.py    NVMe-oF path quality: controllers, ANA states, I/O policy, persistent connect
                 configuration, transport errors in the kernel log
    nics.py      network interfaces from /sys/class/net: state, speed, MTU, driver, virtual or not
    rdma.py      RDMA ports from /sys/class/infiniband: state, link layer (Ethernet = RoCE), GIDs
    roce.py      RoCEv2 per storage interface: PFC and trust, ECN/DCQCN, GIDs, rdma_cm mode, RoCE MTU
    pcie.py      PCIe links of NVMe controllers, NICs and GPUs: current vs maximum speed and width
    numa.py      NUMA placement: the host's nodes, each NIC's and each accelerator's node
    gpus.py      GPUs and accelerators: nvidia-smi, amd-smi (rocm-smi without it), npu-smi
    amd.py       AMD Instinct from amd-smi, across the JSON shapes of ROCm releases
    clock.py     clock sync: ``chronyc -c tracking`` (offset to NTP), else ``timedatectl show``
    tools.py     versions of fio, nvme, python3 and every tool the BOM names; nothing a path shadows
    tuning.py    host tuning: /dev/shm size, kernel command line, NUMA balancing, the login's groups
    counters.py  whether each volume's counters see its reads (kvgate.probes.evidence's sanity probe)
    odirect.py   O_DIRECT capability of every volume: written and read back on scratch, else only read
    kernlog.py   kernel log lines about NVMe(-oF), RDMA, multipath, I/O errors, hung tasks, OOM in a time
                 window (journal, else dmesg), each with its unix time (G4's soak)
    nic_counters.py  NIC pause, CNP, discard and out-of-buffer counters (ethtool -S, RDMA sysfs) (G4)

``FAMILIES`` (here) names each family's collector; ``collect_host`` runs them all on one host.

>>> from kvgate.transport import LocalExecutor
>>> facts = collect_host(LocalExecutor(), HostContext(host="localhost", volumes={}, sudo=False))
>>> facts.family("memory").facts["mem_total_bytes"] > 0
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kvgate.base.errors import Interrupted, LabError, ToolMissing, TransportError
from kvgate.probes.facts import (
    block,
    clock,
    counters,
    cpu,
    gpus,
    memory,
    mounts,
    nics,
    numa,
    nvme,
    nvmeof,
    odirect,
    osinfo,
    pcie,
    rdma,
    roce,
    tools,
    tuning,
)
from kvgate.probes.facts.base import Collected, HostContext, ParseError, artifact_name, int_or_none
from kvgate.probes.facts.gpus import TOOLS
from kvgate.probes.facts.kernlog import kernel_window
from kvgate.probes.facts.nic_counters import nic_counters
from kvgate.probes.facts.nvmeof import FABRIC
from kvgate.transport import Executor

Collector = Callable[[Executor, HostContext], Collected]

FAMILIES: dict[str, Collector] = {
    "cpu": cpu.collect,
    "memory": memory.collect,
    "os": osinfo.collect,
    "block": block.collect,
    "nvme": nvme.collect,
    "pcie": pcie.collect,
    "nics": nics.collect,
    "rdma": rdma.collect,
    "roce": roce.collect,
    "nvmeof": nvmeof.collect,
    "numa": numa.collect,
    "gpus": gpus.collect,
    "mounts": mounts.collect,
    "odirect": odirect.collect,
    "counters": counters.collect,
    "clock": clock.collect,
    "tuning": tuning.collect,
    "tools": tools.collect,
}


@dataclass
class HostFacts:
    """Everything collected on one host, family by family."""

    host: str
    families: dict[str, Collected] = field(default_factory=dict)

    def family(self, name: str) -> Collected:
        """One family's facts; a family that was never collected reads as a family error."""
        if name in self.families:
            return self.families[name]
        return Collected(errors={"family": f"facts family {name!r} was not collected"})

    def artifacts(self) -> dict[str, str]:
        """Every raw command output by its name under artifacts/<host>/ (see `artifact_name`)."""
        return {
            artifact_name(fam, name): text
            for fam, col in self.families.items()
            for name, text in col.artifacts.items()
        }

    def to_json(self) -> dict[str, Any]:
        """Facts, missing tools and errors per family; artifacts are stored separately."""
        return {"host": self.host, "families": {n: c.to_json() for n, c in self.families.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HostFacts:
        """Rebuild stored facts, e.g. to re-judge a run offline; ValueError naming a family that is wrong."""
        stored = data.get("families", {})
        if not isinstance(stored, dict) or not isinstance(data.get("host"), str):
            raise ValueError("expected {host: name, families: {family: {facts, missing_tools, errors}}}")
        families = {}
        for name, c in stored.items():
            try:
                families[name] = Collected.from_json(c)
            except ValueError as exc:
                raise ValueError(f"families.{name}: {exc}") from None
        return cls(host=data["host"], families=families)


def collect_family(collector: Collector, ex: Executor, ctx: HostContext) -> Collected:
    """Run one collector; anything but a TransportError or Interrupted becomes a recorded family error."""
    try:
        return collector(ex, ctx)
    except (TransportError, Interrupted):
        raise
    except ToolMissing as exc:
        return Collected(missing_tools=[exc.tool])
    except (LabError, ValueError, LookupError, TypeError, OSError) as exc:
        return Collected(errors={"family": f"{type(exc).__name__}: {exc}"})


def collect_host(ex: Executor, ctx: HostContext, on_family: Callable[[str], None] | None = None) -> HostFacts:
    """Run every family on one host; `on_family(name)` is called before each one starts."""
    facts = HostFacts(host=ctx.host)
    for name, collector in FAMILIES.items():
        if on_family is not None:
            on_family(name)
        facts.families[name] = collect_family(collector, ex, ctx)
    return facts


__all__ = [
    "FABRIC",
    "FAMILIES",
    "TOOLS",
    "Collected",
    "HostContext",
    "HostFacts",
    "ParseError",
    "artifact_name",
    "collect_host",
    "int_or_none",
    "kernel_window",
    "nic_counters",
]
