"""Host key verification against an OpenSSH known_hosts file, with actionable refusals.

An unknown key is refused unless the host is marked ``trust_on_first_use`` (then the
key is appended to the file); a changed key is always refused. paramiko names hosts on
a non-22 port ``[host]:port``, exactly as OpenSSH writes them.
"""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko
from paramiko.hostkeys import HostKeyEntry

from kvgate.base.errors import HostKeyError

_APPEND_LOCK = threading.Lock()  # fan_out may record several new hosts at once


def known_hosts_name(hostname: str, port: int) -> str:
    """The name a host has in known_hosts: ``host`` on port 22, else ``[host]:port``."""
    return hostname if port == 22 else f"[{hostname}]:{port}"


def describe(key: paramiko.PKey) -> str:
    """``ssh-ed25519 SHA256:...``, the way ssh prints a host key."""
    return f"{key.get_name()} {key.fingerprint}"


def _matches(name: str, pattern: str) -> bool:
    """Whether a known_hosts host field (plain or ``|1|`` hashed) names ``name``."""
    if pattern.startswith("|1|"):
        salt = pattern.split("|")[2]
        return paramiko.HostKeys.hash_host(name, salt) == pattern
    return pattern == name


def find_lines(path: Path, name: str) -> list[tuple[int, HostKeyEntry]]:
    """Line numbers and entries of ``path`` that name ``name``."""
    found = []
    for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        try:
            entry = HostKeyEntry.from_line(line, lineno)
        except paramiko.SSHException:  # malformed line: OpenSSH skips it too
            continue
        if entry is not None and any(_matches(name, h) for h in entry.hostnames):
            found.append((lineno, entry))
    return found


@dataclass(frozen=True)
class KnownHosts:
    """The known_hosts file one connection is verified against."""

    path: Path
    trust_on_first_use: bool
    label: str  # "host gpu-01 (root@10.0.0.5:22)" for messages

    def load_into(self, client: paramiko.SSHClient) -> None:
        """Give the client the file's keys (so it prefers known key types) and our policy."""
        if self.path.is_file():
            client.get_host_keys().load(str(self.path))
        client.set_missing_host_key_policy(_Policy(self))

    def unknown(self, name: str, key: paramiko.PKey) -> None:
        """Refuse an unknown key, or record it when trusting on first use."""
        if not self.trust_on_first_use:
            raise HostKeyError(self._unknown_message(name, key))
        line = f"{name} {key.get_name()} {key.get_base64()}\n"
        with _APPEND_LOCK:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with self.path.open("a+") as f:
                f.seek(0)
                text = f.read()
                f.write(line if not text or text.endswith("\n") else "\n" + line)

    def changed(self, name: str, got: paramiko.PKey) -> HostKeyError:
        """The error for a key that differs from the one on record."""
        lines = find_lines(self.path, name) if self.path.is_file() else []
        where = ", ".join(f"{self.path}:{n} ({describe(e.key)})" for n, e in lines) or str(self.path)
        return HostKeyError(
            f"{self.label}: HOST KEY CHANGED for {name}: possible man-in-the-middle attack, refused. "
            f"The server presents {describe(got)}; known_hosts expects {where}. If the host was "
            f"legitimately reinstalled, remove the old entry with "
            f"`ssh-keygen -R {shlex.quote(name)} -f {shlex.quote(str(self.path))}` and reconnect."
        )

    def _unknown_message(self, name: str, key: paramiko.PKey) -> str:
        host, _, port = name.removeprefix("[").partition("]:")
        scan = f"ssh-keyscan -p {port or 22} -t {key.algorithm_name.lower()} {host}"
        return (
            f"{self.label}: unknown host key for {name}: {describe(key)} is not in {self.path}; refused. "
            f"Check the fingerprint out of band, then record it with "
            f"`{scan} >> {shlex.quote(str(self.path))}`, or set `trust_on_first_use: true` "
            f"for this host in the inventory."
        )


class _Policy(paramiko.MissingHostKeyPolicy):
    """paramiko hook for keys not in known_hosts: defer to `KnownHosts.unknown`."""

    def __init__(self, known: KnownHosts) -> None:
        self.known = known

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        self.known.unknown(hostname, key)
        client.get_host_keys().add(hostname, key.get_name(), key)
