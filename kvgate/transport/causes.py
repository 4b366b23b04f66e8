"""Why a connection failed, in words: the errno the socket gave, never a guess.

paramiko folds ECONNREFUSED and EHOSTUNREACH into one ``NoValidConnectionsError``
("Unable to connect"), so its message cannot tell a stopped sshd from a host whose
route is gone; the errno of each wrapped error can:

>>> import errno
>>> cause(OSError(errno.EHOSTUNREACH, "No route to host"), 5)
'no route to host (EHOSTUNREACH: the host is down, cut off, or its route is gone)'
>>> cause(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), 5)
'connection refused (ECONNREFUSED: is an SSH server listening?)'
"""

from __future__ import annotations

import errno
import socket

import paramiko

# errno -> what it means for reaching a lab host
ERRNO_WORDS: dict[int, str] = {
    errno.ECONNREFUSED: "connection refused (ECONNREFUSED: is an SSH server listening?)",
    errno.EHOSTUNREACH: "no route to host (EHOSTUNREACH: the host is down, cut off, or its route is gone)",
    errno.ENETUNREACH: "network unreachable (ENETUNREACH: this machine has no route to the host's network)",
    errno.ENETDOWN: "network down (ENETDOWN: the local interface towards the host is down)",
    errno.EHOSTDOWN: "host down (EHOSTDOWN)",
    errno.ECONNRESET: "connection reset by the host (ECONNRESET)",
    errno.ECONNABORTED: "connection aborted (ECONNABORTED)",
    errno.EPIPE: "connection broken (EPIPE: the host closed it)",
    errno.EACCES: "not permitted (EACCES: a local firewall rule or a prohibit route blocks the host)",
    errno.EPERM: "not permitted (EPERM: a local firewall rule blocks the host)",
}

_OTHER_CAUSES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
    (socket.gaierror, "cannot resolve the host name ({exc.strerror})"),
    (paramiko.ChannelException, "the jump host could not open a tunnel ({exc.text})"),
    (EOFError, "the server closed the connection"),
)


# paramiko SSHException texts -> what they mean (a TCP connection that SSH never got going on)
_SSH_TEXTS: dict[str, str] = {
    "Error reading SSH protocol banner": "no SSH banner within {timeout_s:g} s",
    "No existing session": "the session ended before login: no banner or key exchange within {timeout_s:g} s",
    "Timeout opening channel.": "the host did not answer a channel request within {timeout_s:g} s",
}
_HUNG = ": the port accepted the connection but sshd does not answer (hung or overloaded?)"


def cause(exc: BaseException, timeout_s: float) -> str:
    """A short, human reason for a paramiko / socket failure, from its errno when it has one."""
    exc = _first_wrapped(exc)
    if isinstance(exc, TimeoutError) or getattr(exc, "errno", None) == errno.ETIMEDOUT:
        return f"timed out after {timeout_s:g} s (ETIMEDOUT: no answer at all: host down or packets dropped)"
    if isinstance(exc, paramiko.SSHException) and (text := _SSH_TEXTS.get(str(exc))):
        return text.format(timeout_s=timeout_s) + _HUNG
    for types, text in _OTHER_CAUSES:
        if isinstance(exc, types):
            return text.format(exc=exc)
    code = getattr(exc, "errno", None)
    if isinstance(exc, OSError) and isinstance(code, int):
        name = errno.errorcode.get(code, f"errno {code}")
        return ERRNO_WORDS.get(code, f"{name}: {exc.strerror}")
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _first_wrapped(exc: BaseException) -> BaseException:
    """The first real socket error inside paramiko's NoValidConnectionsError (one per address tried)."""
    if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError) and exc.errors:
        return next(iter(exc.errors.values()))
    return exc
