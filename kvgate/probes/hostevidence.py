"""The evidence module on a host, for the controller: the same code the agent runs, over an Executor.

Every cold proof the controller makes (fio in G2, the restores of G3, the probes of
``kvgate preflight``) asks the host through ``python3 agent.pyz evidence …``
(:mod:`kvgate.probes.evidence.cli`), so the resolution of a volume to its devices, the
counters and their wording exist once. One ``HostEvidence`` per host and phase keeps
the uploaded agent's path and whether the session is root.

    he = HostEvidence(ex, sudo=host.sudo)
    volume = he.resolve("/mnt/kv/kvgate")
    drop = he.drop()
    before = he.snapshot(volume, engines=((pid, "session"),))
    ...  # the measured reads
    counts = Counts.between(before, he.snapshot(volume, engines=((pid, "session"),)))
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kvgate.base.errors import LabError
from kvgate.probes import agentctl
from kvgate.probes.evidence import Resolved
from kvgate.transport import Executor

CALL_S = 120.0  # a snapshot is milliseconds; a probe reads and writes N MiB; a drop syncs dirty pages


@dataclass(frozen=True)
class CacheDrop:
    """What happened when kvgate tried to empty the host's page cache."""

    dropped: bool
    how: str  # "root", "sudo", or why not
    cached_before_bytes: int
    cached_after_bytes: int
    arc_data_after_bytes: int | None = None  # file data left in OpenZFS's ARC; None: no ZFS on the host


class HostEvidence:
    """Ask one host's kernel for evidence, through the agent's ``evidence`` command."""

    def __init__(self, ex: Executor, *, python: str = "python3", sudo: bool = False) -> None:
        self.ex, self.python, self.sudo = ex, python, sudo
        self._agent: str | None = None
        self._root: bool | None = None

    def call(self, command: str, args: dict[str, Any], *, sudo: bool = False) -> Any:
        """Run one evidence command on the host; its JSON result, or a LabError naming the host."""
        if self._agent is None:
            self._agent = agentctl.ensure_uploaded(self.ex)
        res = self.ex.run(
            "%s %s evidence %s %s",
            self.python,
            self._agent,
            command,
            json.dumps(args),
            timeout_s=CALL_S,
            sudo=sudo,
        )
        try:
            answer = json.loads(res.stdout)
        except ValueError:
            raise LabError(f"{self.ex.host}: evidence {command} gave no answer\n{res}") from None
        if not res.ok or "result" not in answer:
            raise LabError(f"{self.ex.host}: evidence {command}: {answer.get('error', res.tail(3))}")
        return answer["result"]

    @property
    def root(self) -> bool:
        if self._root is None:
            self._root = self.ex.run("id -u", timeout_s=30, check=True).stdout.strip() == "0"
        return self._root

    def resolve(self, path: str) -> Resolved:
        """The devices (or NFS mount) that carry the I/O of files under ``path``."""
        return Resolved.from_json(self.call("resolve", {"path": path}))

    def snapshot(
        self,
        volume: Resolved | None,
        *,
        engines: tuple[tuple[int, str], ...] = (),
        count_lines: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        """Every counter now: the volume's devices or NFS client, each engine (leader pid, scope), logs."""
        args = {
            "volume": volume.to_json() if volume else None,
            "engines": [list(e) for e in engines],
            "count_lines": list(count_lines),
        }
        result: dict[str, Any] = self.call("snapshot", args)
        return result

    def drop(self) -> CacheDrop:
        """sync and drop the page cache as root, or through sudo when the host allows it."""
        if not (self.root or self.sudo):
            return CacheDrop(False, "not root and sudo not allowed", 0, 0)
        result = self.call("drop", {}, sudo=not self.root)
        how = ("root" if self.root else "sudo") if result["done"] else f"failed: {result['error']}"
        before = int(result["cached_before_bytes"])
        after, arc = int(result.get("cached_after_bytes", before)), result.get("arc_data_after_bytes")
        return CacheDrop(result["done"], how, before, after, None if arc is None else int(arc))

    def probe(self, path: str, *, mib: int, scratch: bool) -> dict[str, Any]:
        """The counter sanity probe on ``path``'s volume (writes its own file only where ``scratch``)."""
        result: dict[str, Any] = self.call("probe", {"path": path, "mib": mib, "scratch": scratch})
        return result
