"""A real OpenSSH sshd on 127.0.0.1 for integration tests: own keys, own port, own temp dir.

Usage::

    with SSHServer.start(tmp_path / "a") as server:
        write_known_hosts(tmp_path / "known_hosts", [server])
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from kvgate.configuration.inventory.schema import Host

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")  # sshd refuses to start without it
READY_TIMEOUT_S = 10.0

HostFactory = Callable[..., Host]  # the `ssh_host` fixture: (server, **Host fields) -> Host

# HOME points into the server's own dir, so the session shell reads none of the login
# user's rc files. Debian's bash sources ~/.bashrc for every `ssh host cmd`; on CI root's
# runs `pyenv init`, whose `pyenv rehash` takes a lock file that a SIGKILLed session
# (kill() below) leaves behind, after which every later session waits 60 s for it.
CONFIG = """\
Port {port}
ListenAddress {address}
HostKey {dir}/host_ed25519_key
AuthorizedKeysFile {dir}/authorized_keys
PidFile none
StrictModes no
UsePAM no
PermitRootLogin yes
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowTcpForwarding yes
MaxStartups 64
MaxSessions 64
LogLevel VERBOSE
Subsystem sftp internal-sftp
SetEnv HOME={dir}/home
"""


def keygen(path: Path, comment: str = "kvgate-test") -> Path:
    """Generate an unencrypted ed25519 key pair at ``path`` (+ ``.pub``); return ``path``."""
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (from /proc)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process exited while we looked
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def descendants(pid: int) -> list[int]:
    """All descendants of ``pid``, children first."""
    found, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        found.extend(kids)
        todo.extend(kids)
    return found


@dataclass
class SSHServer:
    """One sshd process; ``kill()`` also drops its open connections, ``restart()`` keeps port and keys.

    ``launcher`` prefixes the sshd command line, e.g. ``ip netns exec NS`` (tests/integration/netns.py).
    """

    dir: Path
    port: int
    address: str = "127.0.0.1"
    launcher: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def start(
        cls, dir: Path, port: int | None = None, *, address: str = "127.0.0.1", launcher: tuple[str, ...] = ()
    ) -> SSHServer:
        """Create keys and config under ``dir`` and start sshd in the foreground."""
        (dir / "home").mkdir(parents=True, exist_ok=True)
        keygen(dir / "host_ed25519_key", "host")
        keygen(dir / "client_key", "client")
        (dir / "authorized_keys").write_bytes((dir / "client_key.pub").read_bytes())
        server = cls(dir=dir, port=port or free_port(), address=address, launcher=launcher)
        server.config.write_text(CONFIG.format(port=server.port, address=address, dir=dir))
        server._spawn()
        return server

    @property
    def config(self) -> Path:
        return self.dir / "sshd_config"

    @property
    def log(self) -> Path:
        return self.dir / "sshd.log"

    @property
    def client_key(self) -> Path:
        return self.dir / "client_key"

    @property
    def host_key_line(self) -> str:
        """The host public key as ``type base64`` (no comment)."""
        kind, blob = (self.dir / "host_ed25519_key.pub").read_text().split()[:2]
        return f"{kind} {blob}"

    @property
    def known_hosts_name(self) -> str:
        return self.address if self.port == 22 else f"[{self.address}]:{self.port}"

    def authorize(self, private_key: Path) -> None:
        """Also accept logins with ``private_key`` (its ``.pub`` is appended to authorized_keys)."""
        with (self.dir / "authorized_keys").open("a") as f:
            f.write(Path(f"{private_key}.pub").read_text())

    def _spawn(self) -> None:
        PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [*self.launcher, SSHD, "-D", "-e", "-f", str(self.config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Wait for the SSH banner; fail with the log if sshd exits or never answers."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                with socket.create_connection((self.address, self.port), timeout=1) as sock:
                    if sock.recv(8).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd on port {self.port} not ready after {READY_TIMEOUT_S} s")

    def kill(self) -> None:
        """SIGKILL sshd and every per-connection child, so open sessions drop too."""
        if self.proc is None:
            return
        victims = [*descendants(self.proc.pid), self.proc.pid]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):  # it exited by itself meanwhile
                os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None
        _wait_dead(victims)  # a loaded machine may let a per-connection child serve a moment longer

    stop = kill

    def restart(self) -> None:
        """Kill and start again on the same port with the same host key."""
        self.kill()
        self._spawn()

    def __enter__(self) -> SSHServer:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.kill()


def _alive(pid: int) -> bool:
    """Running, not a zombie (whose connections are already closed)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_dead(pids: list[int], timeout_s: float = 10) -> None:
    """Best effort (a teardown that raised here would leave the other servers running)."""
    deadline = time.monotonic() + timeout_s
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)


def write_known_hosts(path: Path, servers: Iterable[SSHServer]) -> Path:
    """Write a known_hosts file that trusts exactly these servers' host keys."""
    path.write_text("".join(f"{s.known_hosts_name} {s.host_key_line}\n" for s in servers))
    return path
