"""The agent's cold read windows: drop the page cache, then count the volume's reads (kvgate.probes.evidence).

A read phase opens a window on the directory it reads, reads, and closes it with the
bytes it needed; the record it returns is the phase's ``cold`` field, which the
controller judges with :func:`kvgate.probes.evidence.window.cold_reason` (kvgate.orchestration.g2.workloads):

    {"drop_caches": {requested, done, error, ...}, "volume": Resolved, "counts": Counts,
     "expected_read_bytes": N}
"""

from __future__ import annotations

from typing import Any

from kvgate.probes.agent.events import EventLog
from kvgate.probes.evidence import Counts, Resolved, drop_caches, resolve, snapshot


class ColdWindow:
    """Counters bracketing one measured read phase on one volume.

    >>> import os
    >>> window = ColdWindow(resolve(os.getcwd()), {"requested": False, "done": False})
    >>> window.begin()
    >>> sorted(window.end(1 << 20))
    ['counts', 'drop_caches', 'expected_read_bytes', 'volume']
    """

    def __init__(self, volume: Resolved, drop: dict[str, Any]) -> None:
        self.volume, self.drop = volume, drop
        self._before: dict[str, Any] = {}

    def begin(self) -> None:
        """Snapshot the counters just before the measured reads."""
        self._before = snapshot(self.volume)

    def end(self, expected_read_bytes: int) -> dict[str, Any]:
        """The cold record of the phase, for reads of ``expected_read_bytes``."""
        counts = Counts.between(self._before, snapshot(self.volume))
        return {
            "drop_caches": self.drop,
            "volume": self.volume.to_json(),
            "counts": counts.to_json(),
            "expected_read_bytes": expected_read_bytes,
        }


def cold_window(path: str, *, drop: bool, log: EventLog) -> ColdWindow:
    """Drop caches (if the spec asks and the host permits; a refusal is a note), then open a window."""
    off = {"requested": False, "done": False, "error": "disabled by the spec"}
    result = {"requested": True, **drop_caches()} if drop else off
    if drop and not result["done"]:
        log.emit("note", message=f"page cache not dropped ({result['error']}): cold rests on O_DIRECT")
    window = ColdWindow(resolve(path), result)
    window.begin()
    return window
