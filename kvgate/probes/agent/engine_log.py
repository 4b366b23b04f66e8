"""What an engine without a Prometheus hit counter says of its cache hits in its own log (llama-cpp-python).

A request that loads a saved state from the tier logs ``Llama._create_completion: cache hit``;
the ``Llama.generate: N prefix-match hit`` line after it says how many prompt tokens that state
matched (the rest was evaluated again). A request that reuses the state still loaded in the model
logs the prefix match alone. G3 reads these lines per window from the controller
(kvgate.orchestration.g3.hostio); the G4 soak counts them on the host as the log grows (LogHits).

>>> restored_tokens("Llama._create_completion: cache hit\\n"
...     "Llama.generate: 1017 prefix-match hit, remaining 1 prompt tokens to eval\\n"
...     "Llama.generate: 5 prefix-match hit, remaining 900 prompt tokens to eval\\n")
1017
>>> reused_tokens("Llama.generate: 700 prefix-match hit, remaining 300 prompt tokens to eval\\n"
...     "Llama.generate: 1 prefix-match hit, remaining 999 prompt tokens to eval\\n")
701
"""

from __future__ import annotations

import os
import re

HIT = "Llama._create_completion: cache hit"
_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit")
LOG_HIT_KINDS = ("llama-cpp",)  # engine kinds whose log the soak can count hits in


def restored_tokens(log: str) -> int:
    """Prompt tokens restored from the tier: each ``cache hit`` line's following prefix match."""
    return _scan(log, restoring=False)[0]


def _scan(log: str, *, restoring: bool) -> tuple[int, bool]:
    """Restored tokens in whole lines, and whether a ``cache hit`` still waits for its prefix match."""
    total = 0
    for line in log.splitlines():
        if line.startswith(HIT):
            restoring = True
        elif restoring and (m := _PREFIX.match(line)):
            total, restoring = total + int(m.group(1)), False
    return total, restoring


def resident_tokens(log: str) -> int:
    """Prompt tokens one request reused, from a restored or a resident state: its last prefix match."""
    found = _PREFIX.findall(log)
    return int(found[-1]) if found else 0


def reused_tokens(log: str) -> int:
    """Prompt tokens reused over every request of a log, restored or resident."""
    return sum(int(n) for n in _PREFIX.findall(log))


class LogHits:
    """Restored tokens in an engine's log so far, read on from where the last count stopped.

    A 72-hour soak's log is never read twice; a line still being written waits for its newline.
    A log that shrank (an engine restarted over it) reads as None: the soak's counter went back.
    """

    def __init__(self, path: str) -> None:
        self.path, self.offset, self.total, self.restoring = path, 0, 0, False

    def count(self) -> int | None:
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self.offset:
                    return None
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return None
        whole = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(whole)
        grown, self.restoring = _scan(whole.decode("utf-8", "replace"), restoring=self.restoring)
        self.total += grown
        return self.total
