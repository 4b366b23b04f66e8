"""The SSH route reads an inventory's paths as OpenSSH does: `~` is the user's home."""

from __future__ import annotations

from pathlib import Path

import paramiko

from kvgate.configuration.inventory.schema import Host
from kvgate.transport.sshroute import resolve


def test_key_file_under_home_is_expanded() -> None:
    host = Host(address="127.0.0.1", port=24022, key_file="~/.cache/kvgate-lab/run/id_ed25519")
    route = resolve(host, paramiko.SSHConfig())
    assert route.target.key_files[0] == str(Path.home() / ".cache/kvgate-lab/run/id_ed25519")


def test_jump_hosts_get_the_expanded_key_too() -> None:
    host = Host(address="gpu-1", key_file="~/.ssh/kvgate_ed25519", proxy_jump="ops@bastion:22")
    route = resolve(host, paramiko.SSHConfig())
    assert route.jumps[0].key_files == (str(Path.home() / ".ssh/kvgate_ed25519"),)
