"""Field types of the inventory whose values reach a shell, a regex engine or a destructive write.

Each is checked when the inventory is loaded, so `kvgate inventory check` refuses what
would otherwise fail (or do harm) in the middle of a gate run:

>>> scratch_path_problem("/etc/kvgate")
'under /etc, the system configuration: not a place for scratch data'
>>> scratch_path_problem("/mnt/fx100/kv") is None
True
"""

from __future__ import annotations

import re
import warnings
from typing import Annotated

from pydantic import AfterValidator, Field

# names that become file and directory names in a run (facts/<host>.json, results/<site>/)
Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)]

# an environment variable name, wherever one is declared (an engine instance, a G3 placement, an R9
# model load, an engine profile): it reaches `env NAME=value` on the host and a container's `-e`, so
# a name starting with "-" would be an option to env, and a space, ";" or "=" would change what runs
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=255)]
Environment = dict[EnvName, str]  # the one type of every declared environment

# a tool the BOM names: a command name or an absolute path (G1 runs `command -v` on it)
ToolName = Annotated[
    str, Field(pattern=r"^(?:[A-Za-z0-9_][A-Za-z0-9_.+-]*|/[A-Za-z0-9_.+/-]+)$", max_length=255)
]

# [user@]host[:port], several joined by "," (OpenSSH ProxyJump); host may be [IPv6]
_HOP = re.compile(
    r"(?:[A-Za-z0-9_][A-Za-z0-9_.\-]*@)?(?:[A-Za-z0-9_][A-Za-z0-9_.\-]*|\[[0-9A-Fa-f:.%\w]+\])(?::(\d{1,5}))?"
)


def _regex(value: str) -> str:
    """A pattern is compiled on load: a bad one is a config error, not a crash in G1.

    One Python warns about ("possible nested set": its meaning will change) is refused too.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression ({exc})") from None
        except Warning as exc:
            raise ValueError(
                f"an ambiguous regular expression ({exc}): escape the '[' or '-' meant literally"
            ) from None
    return value


Regex = Annotated[str, AfterValidator(_regex)]


def _proxy_jump(value: str) -> str:
    for hop in value.split(","):
        m = _HOP.fullmatch(hop.strip())
        if m is None or not 1 <= int(m[1] or 22) <= 65535:
            raise ValueError(f"expected [user@]host[:port] (several joined by ','), got hop {hop!r}")
    return value


ProxyJump = Annotated[str, Field(max_length=1024), AfterValidator(_proxy_jump)]

# scratch volumes: what no destructive write may ever go to, whatever the file says
_SYSTEM = "not a place for scratch data"
_SYSTEM_TREES = {
    "/etc": f"the system configuration: {_SYSTEM}",
    "/boot": f"the kernel and boot loader: {_SYSTEM}",
    "/proc": f"a kernel interface: {_SYSTEM}",
    "/sys": f"a kernel interface: {_SYSTEM}",
    "/dev": "device nodes: a volume is a mounted directory (name a raw device under `device:`)",
    "/usr": f"the installed system: {_SYSTEM}",
    "/bin": f"the installed system: {_SYSTEM}",
    "/sbin": f"the installed system: {_SYSTEM}",
    "/lib": f"the installed system: {_SYSTEM}",
    "/lib32": f"the installed system: {_SYSTEM}",
    "/lib64": f"the installed system: {_SYSTEM}",
    "/libx32": f"the installed system: {_SYSTEM}",
}
_TMPFS_UNDER_DEV = "/dev/shm/"  # a directory of its own on the shared-memory tmpfs may be scratch
_WHOLE_DIRS = ("/", "/var", "/home", "/root", "/dev/shm")  # a directory below one of these may be


def path_problem(path: str) -> str | None:
    """Why a volume path is not an absolute, canonical directory path; None when it is."""
    if not path.startswith("/"):
        return "not an absolute path"
    if re.search(r"[\x00-\x1f\x7f]", path):
        return "contains a control character"
    if "//" in path:
        return "contains '//': write the path canonically"
    if any(p in (".", "..") for p in path.split("/")):
        return "has a '.' or '..' component: write the path it means"
    return None


def scratch_path_problem(path: str) -> str | None:
    """Why a canonical path may not be a scratch volume (destructive writes go there); None if it may."""
    if path in _WHOLE_DIRS:
        return "a whole system directory: give scratch data a directory of its own below it"
    if path.startswith(_TMPFS_UNDER_DEV):
        return None
    for tree, why in _SYSTEM_TREES.items():
        if path == tree or path.startswith(tree + "/"):
            return f"under {tree}, {why}"
    return None


def canonical_volume_path(path: str) -> str:
    """A volume path with its trailing slash removed ('/mnt/x/' → '/mnt/x'); raises ValueError."""
    problem = path_problem(path)
    if problem is not None:
        raise ValueError(problem)
    return path.rstrip("/") or "/"
