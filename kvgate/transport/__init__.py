"""Executors by transport name; paramiko is imported only when an SSH host is connected.

    base.py      the one seam: Executor and its frozen CommandResult; ``quote``, the one shell quoting
    local.py     LocalExecutor: this machine by subprocess, the same command semantics as SSH
    ssh.py       SSHExecutor (paramiko): lazy connect, reconnect once, stdout and stderr read together,
                 every command bounded remotely and locally
    sshroute.py  inventory + ~/.ssh/config → a route of SSH hops (ProxyJump), connected hop by hop
    hostkeys.py  host keys checked against known_hosts: unknown refused unless trusted on first use,
                 changed always refused
    liveness.py  keepalives the server must answer, and a watchdog that closes a silently dead link
    causes.py    why a connection failed, in words, from the socket's errno
    route.py     HostRoute: how to reach one host, as transport reads it (the inventory's Host is one)
    fanout.py    one function on many hosts at once: an entry per host, a result or its LabError

``connect`` (here) picks the executor class by the host's transport name.

>>> from kvgate.configuration.inventory import Host  # the inventory's Host is a HostRoute
>>> ex = connect("ctl", Host(transport="local"))
>>> ex.run("echo %s", "a b").stdout
'a b\\n'
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, cast

from kvgate.base.errors import UsageError
from kvgate.transport.base import CANCEL, CommandResult, Executor, quote
from kvgate.transport.fanout import fan_out
from kvgate.transport.local import LocalExecutor
from kvgate.transport.route import HostRoute

# transport name (inventory `transport:`) → "module:Class"; each class has from_host(name, host).
TRANSPORTS: dict[str, str] = {
    "local": "kvgate.transport.local:LocalExecutor",
    "ssh": "kvgate.transport.ssh:SSHExecutor",
}


def executor_class(transport: str) -> type[Any]:
    """Import and return the executor class registered for ``transport``."""
    try:
        module, _, attr = TRANSPORTS[transport].partition(":")
    except KeyError:
        raise UsageError(f"unknown transport {transport!r}; known: {', '.join(sorted(TRANSPORTS))}") from None
    cls: type[Any] = getattr(import_module(module), attr)
    return cls


def connect(name: str, host: HostRoute) -> Executor:
    """The executor for inventory host ``name``, picked by ``host.transport``; connects lazily."""
    return cast(Executor, executor_class(host.transport).from_host(name, host))


__all__ = [
    "CANCEL",
    "CommandResult",
    "Executor",
    "LocalExecutor",
    "connect",
    "fan_out",
    "quote",
]
