"""Fixtures for integration tests: real sshd servers on 127.0.0.1 and Host models for them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sshd import HostFactory, SSHServer, write_known_hosts

from kvgate.configuration.inventory.schema import Host


@pytest.fixture
def sshd_pair(tmp_path: Path) -> Iterator[tuple[SSHServer, SSHServer]]:
    """Two independent sshd servers, each with its own port, host key and client key."""
    servers: list[SSHServer] = []
    try:
        servers += [SSHServer.start(tmp_path / "sshd-a"), SSHServer.start(tmp_path / "sshd-b")]
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.kill()


@pytest.fixture
def known_hosts(tmp_path: Path, sshd_pair: tuple[SSHServer, SSHServer]) -> Path:
    """A known_hosts file trusting both servers of the pair."""
    return write_known_hosts(tmp_path / "known_hosts", sshd_pair)


@pytest.fixture
def ssh_host(known_hosts: Path) -> HostFactory:
    """``ssh_host(server, **overrides)``: a kvgate Host that reaches ``server`` as root."""

    def make(server: SSHServer, **overrides: Any) -> Host:
        fields: dict[str, Any] = {
            "address": "127.0.0.1",
            "port": server.port,
            "user": "root",
            "key_file": str(server.client_key),
            "known_hosts": str(known_hosts),
            "connect_timeout_s": 5,
        }
        return Host(**(fields | overrides))

    return make
