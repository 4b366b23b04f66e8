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
from dataclasses import dataclass

HIT = "Llama._create_completion: cache hit"
_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit(?:, remaining (\d+) prompt tokens)?")
FORMATS = ("llama-cpp",)  # the engine log formats read here (an engine profile's hit_log)


@dataclass
class Tally:
    """What whole log lines said so far: tokens restored from the tier, and every prompt's tokens (its
    prefix match and the rest it evaluated: a server that streams no usage says its prompts' size here)."""

    restored: int = 0
    prompt: int = 0
    restoring: bool = False  # a ``cache hit`` still waits for its prefix match

    def feed(self, log: str) -> Tally:
        for line in log.splitlines():
            if line.startswith(HIT):
                self.restoring = True
            elif m := _PREFIX.match(line):
                self.prompt += int(m.group(1)) + int(m.group(2) or 0)
                if self.restoring:
                    self.restored, self.restoring = self.restored + int(m.group(1)), False
        return self


def restored_tokens(log: str) -> int:
    """Prompt tokens restored from the tier: each ``cache hit`` line's following prefix match."""
    return Tally().feed(log).restored


def resident_tokens(log: str) -> int:
    """Prompt tokens one request reused, from a restored or a resident state: its last prefix match."""
    found = _PREFIX.findall(log)
    return int(found[-1][0]) if found else 0


def reused_tokens(log: str) -> int:
    """Prompt tokens reused over every request of a log, restored or resident."""
    return sum(int(n) for n, _ in _PREFIX.findall(log))


class LogHits:
    """An engine's log tallied so far, read on from where the last count stopped.

    A 72-hour soak's log is never read twice; a line still being written waits for its newline.
    A log that shrank (an engine restarted over it) reads as None: the soak's counters went back.
    """

    def __init__(self, path: str) -> None:
        self.path, self.offset, self.tally = path, 0, Tally()

    def count(self) -> Tally | None:
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
        return self.tally.feed(whole.decode("utf-8", "replace"))
