"""Counters on the engine host that bracket one measured request, and the engine's own hit count.

One command before and one after the request read /proc/diskstats (the candidate
volume's backing device), /proc/<engine pid>/io (bytes the engine process caused
to be read from storage) and the engine log's length; the delta is the window's
evidence. Other readers of the device can only raise its count (the proof can be
fooled by concurrent load, never failed by it); the engine's own counter is exact.

>>> hit_tokens_llama_cpp("Llama._create_completion: cache hit\\n"
...     "Llama.generate: 1017 prefix-match hit, remaining 1 prompt tokens to eval\\n")
1017
>>> hit_tokens_llama_cpp("Llama._create_completion: cache miss\\n")
0
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kvgate.errors import LabError
from kvgate.fio.cold import BlockDevice, parse_diskstats
from kvgate.transport.base import Executor

_SNAPSHOT = "cat /proc/diskstats; echo @@; cat /proc/%s/io 2>/dev/null; echo @@; wc -l < %s"
_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit")


@dataclass(frozen=True)
class Snapshot:
    """Counters at one instant on the engine host."""

    device_read_bytes: int | None
    engine_read_bytes: int | None
    log_lines: int


def snapshot(ex: Executor, dev: BlockDevice | None, pid: int, log_path: str) -> Snapshot:
    """Device and engine read counters and the log length, in one command."""
    res = ex.run(_SNAPSHOT, pid, log_path, timeout_s=30)
    parts = res.stdout.split("@@\n")
    if len(parts) != 3:
        raise LabError(f"{ex.host}: cannot read the window counters\n{res}")
    disk, io, lines = parts
    dev_bytes = None
    if dev is not None:
        found = parse_diskstats(disk).get((dev.major, dev.minor))
        dev_bytes = found[1].read_bytes if found else None
    return Snapshot(dev_bytes, _read_bytes(io), int(lines.strip() or 0))


def _read_bytes(io_text: str) -> int | None:
    for line in io_text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "read_bytes":
            return int(value)
    return None


def delta(before: int | None, after: int | None) -> int | None:
    """``after - before`` when both were read."""
    return after - before if before is not None and after is not None else None


def log_since(ex: Executor, log_path: str, lines: int) -> str:
    """The engine log after its first ``lines`` lines: what the engine said during the window."""
    return ex.run("tail -n +%s %s", lines + 1, log_path, timeout_s=30).stdout


def hit_tokens_llama_cpp(log: str) -> int:
    """Prompt tokens llama-cpp-python restored from its cache during one request (0 on a miss).

    A "cache hit" loads a saved state; the following ``N prefix-match hit`` line says how
    many tokens of that state matched the prompt (the rest was evaluated again).
    """
    if "Llama._create_completion: cache hit" not in log:
        return 0
    return resident_tokens_llama_cpp(log)


def resident_tokens_llama_cpp(log: str) -> int:
    """Prompt tokens llama-cpp-python reused during one request, from a restored or resident state.

    A warm request reuses the state still loaded in the model (no "cache hit" line); the
    ``N prefix-match hit`` line counts what it reused either way.
    """
    found = _PREFIX.findall(log)
    return int(found[-1]) if found else 0


HIT_PARSERS = {"llama-cpp": hit_tokens_llama_cpp}
RESIDENT_PARSERS = {"llama-cpp": resident_tokens_llama_cpp}


def hit_tokens(kind: str, log: str, *, resident: bool = False) -> int | None:
    """The engine's own restored-token count from its log, None when kvgate cannot read it for `kind`.

    ``resident``: count tokens reused from the state the engine still holds (a warm request) too.
    """
    parser = (RESIDENT_PARSERS if resident else HIT_PARSERS).get(kind)
    return parser(log) if parser else None
