"""The agent's cold read windows: drop the page cache, then count the volume's reads (kvgate.probes.evidence).

A read phase opens a window on the directory it reads, reads, and closes it with the
bytes it needed; the record it returns is the phase's ``cold`` field, which the
controller judges with :func:`kvgate.probes.evidence.window.cold_reason` (kvgate.probes.workload_results):

    {"drop_caches": {requested, done, error, ...}, "server_drop": {controlled, how} | None,
     "volume": Resolved, "counts": Counts, "expected_read_bytes": N}

On NFS the server's page cache sits in front of the storage too, and only the controller
can reach the server. So between writing its data and reading it back the agent asks for
that drop: a ``server-drop`` event, answered by the controller with a file in the state
directory (:func:`kvgate.probes.agentctl.wait`'s ``server_drop``).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from kvgate.probes.agent.events import EventLog
from kvgate.probes.evidence import Counts, Resolved, drop_caches, resolve, snapshot


class ColdWindow:
    """Counters bracketing one measured read phase on one volume.

    >>> import os
    >>> window = ColdWindow(resolve(os.getcwd()), {"requested": False, "done": False})
    >>> window.begin()
    >>> sorted(window.end(1 << 20))
    ['counts', 'drop_caches', 'expected_read_bytes', 'server_drop', 'volume']
    """

    def __init__(
        self, volume: Resolved, drop: dict[str, Any], server_drop: dict[str, Any] | None = None
    ) -> None:
        self.volume, self.drop, self.server_drop = volume, drop, server_drop
        self._before: dict[str, Any] = {}

    def begin(self) -> None:
        """Snapshot the counters just before the measured reads."""
        self._before = snapshot(self.volume)

    def end(self, expected_read_bytes: int) -> dict[str, Any]:
        """The cold record of the phase, for reads of ``expected_read_bytes``."""
        counts = Counts.between(self._before, snapshot(self.volume))
        return {
            "drop_caches": self.drop,
            "server_drop": self.server_drop,
            "volume": self.volume.to_json(),
            "counts": counts.to_json(),
            "expected_read_bytes": expected_read_bytes,
        }


def cold_window(path: str, *, drop: bool, data_bytes: int, log: EventLog) -> ColdWindow:
    """Drop caches (if the spec asks and the host permits; a refusal is a note), on NFS the server's
    too (through the controller), then open a window on a read of ``data_bytes``."""
    off = {"requested": False, "done": False, "error": "disabled by the spec"}
    result = {"requested": True, **drop_caches()} if drop else off
    if drop and not result["done"]:
        log.emit("note", message=f"page cache not dropped ({result['error']}): cold rests on O_DIRECT")
    volume = resolve(path)
    server = server_drop(log, data_bytes) if drop and volume.kind == "nfs" else None
    window = ColdWindow(volume, result, server)
    window.begin()
    return window


SERVER_DROP_WAIT_S = 600.0


def server_drop(log: EventLog, data_bytes: int, *, wait_s: float = SERVER_DROP_WAIT_S) -> dict[str, Any]:
    """Ask the controller to drop the NFS server's cache; its answer ({controlled, how}), or why none came.

    >>> import pathlib, tempfile, threading
    >>> log = EventLog(tempfile.mkdtemp())
    >>> answer = pathlib.Path(log.state_dir, "server-drop-1.json")
    >>> part = pathlib.Path(log.state_dir, "part")  # the controller renames a whole answer into place
    >>> _ = part.write_text('{"controlled": true, "how": "x"}')
    >>> threading.Timer(0.1, part.rename, [answer]).start()
    >>> server_drop(log, 1 << 20, wait_s=5)
    {'controlled': True, 'how': 'x'}
    >>> server_drop(log, 1 << 20, wait_s=0.1)["how"]
    'no answer from the controller in 0.1 s'
    >>> _ = pathlib.Path(log.state_dir, "server-drop-3.json").write_text("True")
    >>> server_drop(log, 1 << 20, wait_s=5)["how"]
    "unreadable answer from the controller: 'True'"
    """
    seq = log.emit("server-drop", data_bytes=data_bytes)["seq"]
    path = os.path.join(log.state_dir, server_drop_file(seq))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read()
        except FileNotFoundError:
            time.sleep(0.1)
            continue
        try:  # the controller renames a whole answer into place: what is there is all there will be
            answer = json.loads(text)
            return {"controlled": answer["controlled"] is True, "how": str(answer["how"])}
        except (ValueError, KeyError, TypeError):
            return {"controlled": False, "how": f"unreadable answer from the controller: {text[:200]!r}"}
    return {"controlled": False, "how": f"no answer from the controller in {wait_s:g} s"}


def server_drop_file(seq: int) -> str:
    """The answer's file name in the state directory, for the ``server-drop`` event numbered ``seq``."""
    return f"server-drop-{seq}.json"
