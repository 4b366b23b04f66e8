"""How to reach one host, as the transport reads it: its own type, so transport needs no inventory.

The inventory's ``Host`` has these attributes and is one; a test or a tool may pass any
object that has them.
"""

from __future__ import annotations

from typing import Protocol


class HostRoute(Protocol):
    """The address, credentials and limits of one host; read-only."""

    @property
    def transport(self) -> str: ...  # a name registered in kvgate.transport.TRANSPORTS

    @property
    def address(self) -> str: ...

    @property
    def explicit_port(self) -> int | None: ...  # None: ~/.ssh/config's, else 22

    @property
    def user(self) -> str | None: ...

    @property
    def key_file(self) -> str | None: ...

    @property
    def proxy_jump(self) -> str | None: ...

    @property
    def known_hosts(self) -> str | None: ...

    @property
    def trust_on_first_use(self) -> bool: ...

    @property
    def sudo(self) -> bool: ...

    @property
    def connect_timeout_s(self) -> float: ...
