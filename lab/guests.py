"""The lab's topology: two guests, their loopback ports, drives and the links between them.

Every address is on 127.0.0.1 (the host side) or inside the guests' own private links: the
user network is QEMU's slirp with restrict=on (a guest reaches nothing but its forwarded SSH
port), and each guest-to-guest link is a QEMU socket netdev, the array listening on a
loopback port and the client connecting to it. The ports sit in KVGATE_LAB_PORT_BASE's block
(default 24000: this project's lab block).
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def port_base() -> int:
    return int(os.environ.get("KVGATE_LAB_PORT_BASE", "24000"))


@dataclass(frozen=True)
class Link:
    """One guest-to-guest Ethernet link: a socket on a loopback port, a /24 inside the guests."""

    name: str
    port: int
    subnet: str  # "10.99.1": the array is .1, the client .2


@dataclass(frozen=True)
class Guest:
    name: str
    index: int  # its MACs and its SSH port offset
    memory_mib: int
    nvme_drives: tuple[str, ...]  # serials of the emulated NVMe drives (QEMU -device nvme)
    listens: bool  # the array listens on the links, the client connects

    @property
    def ssh_port(self) -> int:
        return port_base() + 22 + self.index

    @property
    def address_suffix(self) -> int:
        return 1 if self.listens else 2


def links() -> tuple[Link, ...]:
    """Two links: two NVMe/TCP paths to the array (one per ANA group's optimized port)."""
    return (
        Link("link1", port_base() + 11, "10.99.1"),
        Link("link2", port_base() + 12, "10.99.2"),
    )


ARRAY = Guest("lab-array", 0, 1024, ("KVGLAB-NS1", "KVGLAB-NS2", "KVGLAB-NFS"), listens=True)
CLIENT = Guest("lab-client", 1, 1536, (), listens=False)
GUESTS = (ARRAY, CLIENT)  # boot order: the array listens before the client connects
NVME_DRIVE_SIZE = "2G"
