"""A lab host behind its own network link: a network namespace, a veth pair, a real sshd inside.

The link can then misbehave the way a lab's does, with the kernel's own errors:

- ``cut()``: the far end of the link goes down. New connections fail with
  EHOSTUNREACH once ARP gives up (~3 s); an open connection just hears nothing more.
- ``blackhole()``: packets vanish silently (the neighbour entry is pinned, then the link cut),
  as behind a dead switch port or a firewall DROP: connecting times out.
- ``withdraw_route()``: this machine has no route to the host any more (ENETUNREACH). A
  ``throw`` route ends the lookup as if none matched: this machine's default route would
  otherwise carry the packets elsewhere.

Needs root and ``ip netns`` (the kernel here has no sch_netem, so no packet-loss emulation);
`unavailable()` says why when the machine cannot do it, and the tests skip with that reason.

Usage::

    with FarHost.create(tmp_path / "far") as far:
        ex = SSHExecutor("far", far.host(known_hosts))
        far.cut()
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from sshd import SSHServer

from kvgate.configuration.inventory.schema import Host

SUBNET = "10.251"  # /30 links are carved from 10.251.0.0/16


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``ip ARGS``; a failure raises with ip's own message."""
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    return proc


@functools.cache
def unavailable() -> str | None:
    """Why network namespaces cannot be used here (not root, no `ip`, no netns support), or None."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    if shutil.which("ip") is None:
        return "needs iproute2's `ip`"
    probe = f"kvgate-probe-{os.getpid()}"
    made = ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()}"
    ip("netns", "del", probe, check=False)
    return None


def _free_link() -> tuple[str, str]:
    """Addresses (this side, far side) of a /30 no interface or route here uses yet."""
    while True:
        third, fourth = random.randrange(256), random.randrange(0, 256, 4)
        near, far = f"{SUBNET}.{third}.{fourth + 1}", f"{SUBNET}.{third}.{fourth + 2}"
        if not ip("route", "show", "to", "match", far).stdout.count(SUBNET):
            return near, far


@dataclass
class FarHost:
    """One namespace with an sshd on port 22, reached from here over a veth pair."""

    netns: str
    near_if: str  # the veth end on this machine
    far_if: str  # the veth end inside the namespace
    near: str
    address: str
    server: SSHServer | None = None

    @classmethod
    def create(cls, dir: Path, *, prefix: str = "kvgate") -> FarHost:
        """``prefix`` starts the namespace's name (the scale benchmark's are ``kvs-…``)."""
        tag = f"{os.getpid() % 10000:04d}{random.randrange(16**4):04x}"
        near, far = _free_link()
        host = cls(netns=f"{prefix}-{tag}", near_if=f"kvn{tag}", far_if=f"kvf{tag}", near=near, address=far)
        try:
            host._link()
            launcher = ("ip", "netns", "exec", host.netns)
            host.server = SSHServer.start(dir, 22, address=far, launcher=launcher)
        except BaseException:
            host.destroy()
            raise
        return host

    def _link(self) -> None:
        ip("netns", "add", self.netns)
        ip("link", "add", self.near_if, "type", "veth", "peer", "name", self.far_if, "netns", self.netns)
        ip("addr", "add", f"{self.near}/30", "dev", self.near_if)
        ip("link", "set", self.near_if, "up")
        ip("-n", self.netns, "addr", "add", f"{self.address}/30", "dev", self.far_if)
        ip("-n", self.netns, "link", "set", self.far_if, "up")
        ip("-n", self.netns, "link", "set", "lo", "up")

    def host(self, known_hosts: Path, **overrides: Any) -> Host:
        """A kvgate Host that reaches this sshd as root over the link."""
        assert self.server is not None
        fields: dict[str, Any] = {
            "address": self.address,
            "user": "root",
            "key_file": str(self.server.client_key),
            "known_hosts": str(known_hosts),
            "connect_timeout_s": 5,
        }
        return Host(**(fields | overrides))

    def cut(self) -> None:
        """The far end of the link goes down."""
        ip("-n", self.netns, "link", "set", self.far_if, "down")

    def mend(self) -> None:
        ip("-n", self.netns, "link", "set", self.far_if, "up")

    def blackhole(self) -> None:
        """Packets to the host vanish without an error: its MAC is pinned, then the link is cut."""
        mac = ip("-n", self.netns, "-br", "link", "show", self.far_if).stdout.split()[2]
        ip("neigh", "replace", self.address, "lladdr", mac, "dev", self.near_if, "nud", "permanent")
        self.cut()

    def withdraw_route(self) -> None:
        """This machine no longer has any route to the host."""
        ip("route", "add", "throw", f"{self.address}/32")

    def destroy(self) -> None:
        """Stop sshd, remove the route, the namespace and the veth pair; idempotent."""
        if self.server is not None:
            self.server.kill()
        ip("route", "del", "throw", f"{self.address}/32", check=False)
        ip("netns", "del", self.netns, check=False)  # takes the far end, and so the pair, with it
        ip("link", "del", self.near_if, check=False)

    def __enter__(self) -> FarHost:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.destroy()
