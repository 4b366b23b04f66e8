"""An NFS volume's server cache: dropped over SSH, outsized by the data, or a cold read not proven.

The client's mountstats prove the bytes came from the server (:mod:`kvgate.probes.evidence.nfs`),
not that the server read them from its disks: its page cache is DRAM in front of the
storage under test. A volume's ``nfs_server`` (inventory) says how kvgate controls it:

- ``host``: an inventory host (the server, or a host with root on it); kvgate syncs and
  drops its page cache over SSH before every cold read of the volume;
- ``ram_gib``: the server's RAM; a read of a data set larger than it cannot be served
  from that cache;
- on a ZFS server ``echo 3`` leaves the ARC as its shrinker chooses: a drop that left more
  file data in the ARC than a tenth of the data set (the share a cold read may miss by,
  ``cold.min_read_ratio``) does not make it cold;
- neither: a cold read on the volume is INVALID with the reason below. A site that
  accepts that limit waives the checks (``kvgate waive``): the limit then shows on every
  row, with the approver's name, instead of silently in none.

Reads that the agent runs on the client (G2's workloads, G3's storage baselines) write their
data and read it back in one run: between the two the agent asks the controller for the drop
(a ``server-drop`` event, :func:`kvgate.probes.agentctl.wait`), which answers with ``answer``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kvgate.base.units import GiB
from kvgate.configuration.inventory import Inventory, NfsServer
from kvgate.probes.hostevidence import CacheDrop, HostEvidence
from kvgate.transport import Executor

ARC_SHARE = 0.1  # ARC data left after the drop, as a share of the data set, beyond which it is not cold


@dataclass(frozen=True)
class ServerCold:
    """What kvgate did about the server's cache before one cold read on an NFS volume."""

    controlled: bool
    how: str  # "dropped on nfs1 (sudo)", "data set 300 GB > server RAM 256 GiB", or why not

    @property
    def reason(self) -> str | None:
        return None if self.controlled else f"NFS server cache not controlled: {self.how}"


class ServerCache:
    """Control of one NFS volume's server cache (see the module docstring)."""

    def __init__(self, volume: str, server: NfsServer | None, evidence: HostEvidence | None) -> None:
        self.volume, self.server, self.evidence = volume, server, evidence
        self._lock = threading.Lock()  # several clients of one volume may ask at once

    @classmethod
    def of(cls, inv: Inventory, volume: str, executors: Mapping[str, Executor]) -> ServerCache:
        server = inv.volumes[volume].nfs_server
        name = server.host if server else None
        he = HostEvidence(executors[name], sudo=inv.hosts[name].sudo) if name else None
        return cls(volume, server, he)

    def make_cold(self, *, data_bytes: int) -> ServerCold:
        """Before a cold read of ``data_bytes``: drop the server's cache, or say why it cannot hold them."""
        outsized = self.outsized(data_bytes=data_bytes)
        if outsized.controlled:
            return outsized
        ram = self.server.ram_gib if self.server else None
        if self.evidence is not None:
            with self._lock:
                drop = self.evidence.drop()
            return self._dropped(self.evidence.ex.host, drop, data_bytes)
        return ServerCold(False, self._undeclared(data_bytes, ram))

    def _dropped(self, host: str, drop: CacheDrop, data_bytes: int) -> ServerCold:
        """What a drop on the server did, the ARC of a ZFS server included."""
        if not drop.dropped:
            return ServerCold(False, f"drop on {host}: {drop.how}")
        left = drop.arc_data_after_bytes
        if left is None:
            return ServerCold(True, f"dropped on {host} ({drop.how})")
        if data_bytes and left > ARC_SHARE * data_bytes:
            return ServerCold(
                False,
                f"dropped on {host}, but its ZFS ARC still holds {left / 1e9:.2f} GB of file data, more than "
                f"{ARC_SHARE:.0%} of the {data_bytes / 1e9:.2f} GB data set (echo 3 does not empty the ARC): "
                "set primarycache=metadata on the exported dataset for the gate, or read a data set larger "
                f"than the server's RAM (volumes.{self.volume}.nfs_server.ram_gib)",
            )
        return ServerCold(True, f"dropped on {host} ({drop.how}; ZFS ARC data left {left / 1e9:.2f} GB)")

    def answer(self, data_bytes: int) -> dict[str, Any]:
        """make_cold as the agent's ``server-drop`` request is answered (kvgate.probes.agentctl.wait)."""
        cold = self.make_cold(data_bytes=data_bytes)
        return {"controlled": cold.controlled, "how": cold.how}

    def outsized(self, *, data_bytes: int) -> ServerCold:
        """Whether ``data_bytes`` outsize the server's declared RAM (then no drop is needed)."""
        ram = self.server.ram_gib if self.server else None
        if ram is not None and data_bytes > ram * GiB:
            return ServerCold(True, f"data set {data_bytes / 1e9:.1f} GB > server RAM {ram:g} GiB")
        return ServerCold(
            False,
            f"no drop asked and the {data_bytes / 1e9:.1f} GB data set is not larger than the server's "
            f"RAM (volumes.{self.volume}.nfs_server.ram_gib)",
        )

    def _undeclared(self, data_bytes: int, ram: float | None) -> str:
        if ram is not None:
            return (
                f"data set {data_bytes / 1e9:.1f} GB fits the server's {ram:g} GiB of RAM and "
                f"volumes.{self.volume}.nfs_server.host is not set (kvgate would drop its cache)"
            )
        return (
            f"volumes.{self.volume}.nfs_server names neither the server's host (kvgate drops its "
            "cache over SSH) nor its RAM (ram_gib: a larger data set defeats its cache)"
        )
