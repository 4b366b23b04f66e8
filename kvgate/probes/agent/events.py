"""The agent's state directory: events.jsonl, result.json, exit_code, pid and heartbeat.

Everything the controller needs to reattach after an SSH drop lives in files
(scylla-cluster-tests PR #7834): events are appended one JSON line per
``write``; result.json and exit_code are written atomically, in that order, so
``exit_code`` existing means the result is complete. A full disk must not leave a torn
event nor a run without its result: an event that does not fit is cut back off (the
journal ends at its last whole event) and fails the workload, and a small reserve file,
removed before the result is written, leaves room for the result and its exit code.

>>> import tempfile
>>> log = EventLog(tempfile.mkdtemp())
>>> log.emit("progress", phase="write", done_bytes=1, total_bytes=2)["seq"]
1
>>> log.close()
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from typing import Any

EVENTS = "events.jsonl"
RESULT = "result.json"
EXIT_CODE = "exit_code"
PID = "pid"
HEARTBEAT = "heartbeat"
RESERVE = "reserve"
RESERVE_BYTES = 16 * 1024  # room for result.json, exit_code and the result event on a full disk
HEARTBEAT_INTERVAL_S = 2.0
PROGRESS_INTERVAL_S = 0.5


class Cancelled(Exception):
    """The run was asked to stop (SIGTERM, or a sibling thread failed)."""


def clean(value: Any) -> Any:
    """JSON-safe copy: non-finite floats become None, tuples become lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file, fsync and rename."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def proc_start_ticks(pid: int) -> int:
    """Start time of ``pid`` in clock ticks since boot (field 22 of /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return int(stat[stat.rindex(")") + 2 :].split()[19])


def write_pid(state_dir: str) -> None:
    """Record ``<pid> <start ticks>`` so a canceller can verify it kills the same process."""
    pid = os.getpid()
    write_atomic(os.path.join(state_dir, PID), f"{pid} {proc_start_ticks(pid)}\n")


class EventLog:
    """Append-only JSON-lines event log; thread-safe, one unbuffered write per event, never a torn one."""

    def __init__(self, state_dir: str) -> None:
        self.state_dir = state_dir
        self._t0 = time.monotonic()
        self._seq = 0
        self._lock = threading.Lock()
        self._fd = os.open(os.path.join(state_dir, EVENTS), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._reserve = os.path.join(state_dir, RESERVE)
        with contextlib.suppress(OSError):  # a disk full already: the first event fails the run
            write_atomic(self._reserve, "\0" * RESERVE_BYTES)

    def emit(self, event: str, **fields: Any) -> dict[str, Any]:
        """Append one event; every event carries seq, t_s (since start) and time_unix_s."""
        with self._lock:
            record = {"event": event, "seq": self._seq + 1, "t_s": round(time.monotonic() - self._t0, 6)}
            record["time_unix_s"] = round(time.time(), 6)
            record.update(clean(fields))
            self._append((json.dumps(record, ensure_ascii=True, allow_nan=False) + "\n").encode())
            self._seq += 1  # an event that did not fit takes no number: the journal shows no gap
        return record

    def _append(self, line: bytes) -> None:
        """Write the whole line, or cut what got written back off and raise (ENOSPC: the disk is full)."""
        size = os.fstat(self._fd).st_size
        try:
            done = 0
            while done < len(line):
                done += os.write(self._fd, line[done:])
        except OSError:
            os.ftruncate(self._fd, size)
            raise

    def finish(self, result: dict[str, Any], exit_code: int) -> None:
        """Emit the result event, then write result.json, then exit_code (the completion mark)."""
        with contextlib.suppress(FileNotFoundError):
            os.remove(self._reserve)
        with contextlib.suppress(OSError):  # a full journal: result.json still carries the result
            self.emit("result", **result)
        body = json.dumps(clean(result), ensure_ascii=True, allow_nan=False, indent=1)
        write_atomic(os.path.join(self.state_dir, RESULT), body + "\n")
        write_atomic(os.path.join(self.state_dir, EXIT_CODE), f"{exit_code}\n")
        self.close()

    def close(self) -> None:
        """Close the events file (finish does it)."""
        os.close(self._fd)


class Progress:
    """Thread-safe byte counter for one phase, emitting at most every PROGRESS_INTERVAL_S."""

    def __init__(self, log: EventLog, phase: str, total_bytes: int, **fields: Any) -> None:
        self.log, self.phase, self.total_bytes, self.fields = log, phase, total_bytes, fields
        self.done_bytes = 0
        self._start = self._last = time.monotonic()
        self._lock = threading.Lock()
        self._emit()

    def add(self, n: int) -> None:
        """Count ``n`` more bytes done; emit if enough time has passed."""
        with self._lock:
            self.done_bytes += n
            now = time.monotonic()
            due = now - self._last >= PROGRESS_INTERVAL_S
            if due:
                self._last = now
        if due:
            self._emit()

    def close(self) -> None:
        """Emit the final count for the phase."""
        self._emit()

    def _emit(self) -> None:
        self.log.emit(
            "progress",
            phase=self.phase,
            done_bytes=self.done_bytes,
            total_bytes=self.total_bytes,
            elapsed_s=time.monotonic() - self._start,
            **self.fields,
        )


class Heartbeat:
    """A daemon thread rewriting ``heartbeat`` (unix seconds) every couple of seconds."""

    def __init__(self, state_dir: str, interval_s: float = HEARTBEAT_INTERVAL_S) -> None:
        self.path = os.path.join(state_dir, HEARTBEAT)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        """Write the first beat now and keep beating in the background."""
        self._beat()
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop beating (the file stays with the last time)."""
        self._stop.set()

    def _beat(self) -> None:
        write_atomic(self.path, f"{int(time.time())}\n")

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            with contextlib.suppress(OSError):  # a full state dir must not kill the workload
                self._beat()
