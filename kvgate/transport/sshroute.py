"""Where and how to connect: inventory + ~/.ssh/config → a route of SSH hops, then connect it.

The inventory's explicit values win over ~/.ssh/config (HostName, User, Port,
IdentityFile, ProxyJump, UserKnownHostsFile). ``ProxyJump`` hops are chained with
``direct-tcpip`` channels, each hop's host key verified like the target's:

>>> from kvgate.configuration.inventory import Host
>>> resolve(Host(address="gpu-01", proxy_jump="ops@bastion:2222"), paramiko.SSHConfig()).jumps
(Endpoint(hostname='bastion', port=2222, user='ops', key_files=()),)
"""

from __future__ import annotations

import contextlib
import getpass
from dataclasses import dataclass
from pathlib import Path

import paramiko

from kvgate.base.errors import ConfigError, TransportError
from kvgate.transport.causes import cause
from kvgate.transport.hostkeys import KnownHosts, known_hosts_name
from kvgate.transport.liveness import new_transport
from kvgate.transport.route import HostRoute

SSH_CONFIG = Path("~/.ssh/config")
KNOWN_HOSTS = Path("~/.ssh/known_hosts")

# what paramiko raises when a connection cannot be made or has dropped
CONNECTION_ERRORS = (paramiko.SSHException, EOFError, OSError)


@dataclass(frozen=True)
class Endpoint:
    """One SSH server to authenticate to: the target or a jump host."""

    hostname: str
    port: int
    user: str
    key_files: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.user}@{self.hostname}:{self.port}"


@dataclass(frozen=True)
class Route:
    """The jump hosts, in order, then the target; all verified against one known_hosts."""

    target: Endpoint
    jumps: tuple[Endpoint, ...]
    known_hosts: Path
    trust_on_first_use: bool
    timeout_s: float

    def __str__(self) -> str:
        return str(self.target) + "".join(f" via {j}" for j in self.jumps)


def load_ssh_config(path: Path = SSH_CONFIG) -> paramiko.SSHConfig:
    """Parse an OpenSSH client config; a missing file is an empty config."""
    path = path.expanduser()
    if not path.is_file():
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(str(path))
    except (OSError, paramiko.ssh_exception.ConfigParseError) as exc:
        raise ConfigError(str(path), "", f"a valid OpenSSH client config ({exc})") from exc


def _endpoint(config: paramiko.SSHConfig, alias: str, user: str | None, port: int | None) -> Endpoint:
    """Resolve one alias through the ssh config; explicit ``user``/``port`` win."""
    opts = config.lookup(alias)
    keys: list[str] = opts.get("identityfile") or []  # type: ignore[assignment]  # a list at runtime
    return Endpoint(
        hostname=opts.get("hostname", alias),
        port=port or int(opts.get("port", 22)),
        user=user or opts.get("user") or getpass.getuser(),
        key_files=tuple(str(Path(k).expanduser()) for k in keys),
    )


def parse_jump(spec: str) -> tuple[str | None, str, int | None]:
    """``user@host:port`` (user and port optional, ``[v6]:port`` allowed) → parts."""
    user, _, rest = spec.strip().rpartition("@")
    host, port = rest, None
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        port = (int(tail[1:]) if tail[1:].isdigit() else 0) if tail.startswith(":") else None
    elif rest.count(":") == 1:
        host, text = rest.split(":")
        port = int(text) if text.isdigit() else 0
    if not host or port == 0:
        raise ConfigError("inventory or ssh config", "proxy_jump", f"[user@]host[:port], got {spec!r}")
    return user or None, host, port


def resolve(host: HostRoute, config: paramiko.SSHConfig) -> Route:
    """The route to ``host``: the inventory's explicit values first, then the ssh config."""
    opts = config.lookup(host.address)
    port = host.explicit_port
    target = _endpoint(config, host.address, host.user, port)
    own_key = (str(Path(host.key_file).expanduser()),) if host.key_file else ()  # ~/ as ssh reads it
    jump_spec = host.proxy_jump or opts.get("proxyjump") or "none"
    jumps = tuple(
        _with_keys(_endpoint(config, h, u, p), own_key, inventory_first=False)
        for u, h, p in map(parse_jump, jump_spec.split(","))
        if jump_spec != "none"
    )
    known = host.known_hosts or (opts.get("userknownhostsfile") or str(KNOWN_HOSTS)).split()[0]
    return Route(
        target=_with_keys(target, own_key, inventory_first=True),
        jumps=jumps,
        known_hosts=Path(known).expanduser(),
        trust_on_first_use=host.trust_on_first_use,
        timeout_s=host.connect_timeout_s,
    )


def _with_keys(ep: Endpoint, keys: tuple[str, ...], *, inventory_first: bool) -> Endpoint:
    """Add the inventory key: before the config's for the target, after it for jump hosts."""
    merged = keys + ep.key_files if inventory_first else ep.key_files + keys
    return Endpoint(ep.hostname, ep.port, ep.user, tuple(dict.fromkeys(merged)))


def _hop_cause(hop: Endpoint, exc: BaseException, timeout_s: float) -> str:
    """`cause`, plus which user and keys were tried when authentication failed."""
    text = cause(exc, timeout_s)
    if isinstance(exc, paramiko.AuthenticationException) or "No authentication methods" in text:
        keys = ", ".join(hop.key_files) or "ssh-agent and ~/.ssh/id_*"
        text = f"authentication failed as user {hop.user!r} (tried {keys}): {exc}"
    return text


def connect_route(route: Route, label: str, *, action: str = "cannot connect") -> list[paramiko.SSHClient]:
    """Connect every hop of ``route``; the last client is the target. Errors name the hop."""
    known = KnownHosts(route.known_hosts, route.trust_on_first_use, label)
    clients: list[paramiko.SSHClient] = []
    try:
        for hop in (*route.jumps, route.target):
            what = action if hop is route.target else f"{action} via jump host {hop}"
            try:
                clients.append(_connect_hop(hop, clients[-1] if clients else None, known, route.timeout_s))
            except paramiko.BadHostKeyException as exc:
                raise known.changed(known_hosts_name(hop.hostname, hop.port), exc.key) from exc
            except CONNECTION_ERRORS as exc:
                raise TransportError(f"{label}: {what}: {_hop_cause(hop, exc, route.timeout_s)}") from exc
    except BaseException:
        close_all(clients)
        raise
    return clients


def _connect_hop(
    hop: Endpoint, via: paramiko.SSHClient | None, known: KnownHosts, timeout_s: float
) -> paramiko.SSHClient:
    """Connect and authenticate to one hop, directly or through the previous hop."""
    sock = None
    if via is not None:
        transport = via.get_transport()
        assert transport is not None  # a connected client always has one
        dest, src = (hop.hostname, hop.port), ("127.0.0.1", 0)
        sock = transport.open_channel("direct-tcpip", dest, src, timeout=timeout_s)
    client = paramiko.SSHClient()
    try:
        known.load_into(client)
        client.connect(
            hop.hostname,
            hop.port,
            username=hop.user,
            key_filename=list(hop.key_files) or None,  # type: ignore[arg-type]  # documented: str or list
            look_for_keys=not hop.key_files,
            timeout=timeout_s,
            banner_timeout=timeout_s,
            auth_timeout=timeout_s,
            channel_timeout=timeout_s,
            sock=sock,
            transport_factory=new_transport,  # notes each packet heard, for the Heartbeat
        )
    except BaseException:
        client.close()
        raise
    return client


def close_all(clients: list[paramiko.SSHClient]) -> None:
    """Close clients target-first, then jump hosts.

    Closing a target reached through a jump host that died writes to a dead link (paramiko
    raises EOFError): nothing is left to close there, and the caller's own error must show.
    """
    for client in reversed(clients):
        with contextlib.suppress(*CONNECTION_ERRORS):
            client.close()
