"""``python3 agent.pyz evidence COMMAND JSON``: the evidence module's answers for the controller.

One JSON object in (the argument), one out (stdout): ``{"result": ...}``, or
``{"error": "..."}`` with exit code 1 when a counter the caller needs cannot be read.

    resolve   {"path"}                              → Resolved (blockdev)
    snapshot  {"volume", "engines", "count_lines"}  → a snapshot (window)
    drop      {}                                    → what dropping the page cache did
    probe     {"path", "mib", "scratch"}            → the counter sanity probe
"""

from __future__ import annotations

import json
import sys
from typing import Any

from kvgate.probes.evidence.blockdev import DeviceError, Resolved, resolve
from kvgate.probes.evidence.counters import CounterError, drop_caches
from kvgate.probes.evidence.engines import EngineGone
from kvgate.probes.evidence.probe import probe
from kvgate.probes.evidence.window import snapshot


def _volume(data: Any) -> Resolved | None:
    return None if data is None else Resolved.from_json(data)


COMMANDS = {
    "resolve": lambda a: resolve(a["path"]).to_json(),
    "snapshot": lambda a: snapshot(
        _volume(a.get("volume")),
        engines=tuple((int(pid), str(scope)) for pid, scope in a.get("engines", [])),
        count_lines=tuple(a.get("count_lines", [])),
    ),
    "drop": lambda a: drop_caches(),
    "probe": lambda a: probe(resolve(a["path"]), a["path"], mib=int(a["mib"]), scratch=bool(a["scratch"])),
}


def main(argv: list[str]) -> int:
    """Run one command; print its JSON answer; 0 on an answer, 1 on an error, 2 on bad usage."""
    if len(argv) != 2 or argv[0] not in COMMANDS:
        print(json.dumps({"error": f"usage: evidence {{{'|'.join(COMMANDS)}}} JSON"}))
        return 2
    try:
        answer = COMMANDS[argv[0]](json.loads(argv[1]))
    except (DeviceError, CounterError, EngineGone, OSError, KeyError, ValueError) as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps({"result": answer}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
