"""Validate a workload spec (plain JSON) and own the run directory under the target.

The controller builds specs from validated profiles, but the agent trusts
nothing: unknown keys, wrong types and a target that is not an existing
directory are refused with a message naming the key. All writes go to one new
run directory under the target; cleanup removes only files this run created,
then that directory.

>>> Spec({"requests": 4}, "kv-restore").integer("requests")
4
>>> Spec({"requests": 0}, "kv-restore").integer("requests")
Traceback (most recent call last):
...
kvgate.probes.agent.spec.SpecError: kv-restore spec: requests: expected an integer >= 1, got 0
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kvgate.probes.agent.content import ALGORITHMS, Pattern
from kvgate.probes.agent.events import EventLog

COMMON_KEYS = (
    "target_dir",
    "seed",
    "io_bytes",
    "direct",
    "drop_caches",
    "checksum",
    "keep_files",
    "run_id",
    "labels",
)
DEFAULT_IO_BYTES = 8 << 20
NAME_PUNCTUATION = str.maketrans("", "", "-_./")


class SpecError(ValueError):
    """The spec is invalid; the message names the workload and the key."""


class Spec:
    """Typed access to one workload's spec dict; every getter validates."""

    def __init__(self, data: Any, workload: str, allowed: tuple[str, ...] = ()) -> None:
        if not isinstance(data, dict):
            raise SpecError(f"{workload} spec: expected a JSON object, got {type(data).__name__}")
        self.data, self.workload = data, workload
        if allowed:
            unknown = sorted(set(data) - set(allowed) - set(COMMON_KEYS))
            if unknown:
                raise SpecError(f"{workload} spec: unknown keys {unknown}; allowed: {sorted(allowed)}")

    def fail(self, key: str, expected: str) -> SpecError:
        """A SpecError naming the key, what was expected and what was given."""
        return SpecError(f"{self.workload} spec: {key}: expected {expected}, got {self.data.get(key)!r}")

    def integer(self, key: str, default: int | None = None, minimum: int = 1, multiple_of: int = 1) -> int:
        """An integer >= minimum (and a multiple of ``multiple_of``)."""
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"an integer >= {minimum}")
        if value % multiple_of:
            raise self.fail(key, f"a multiple of {multiple_of}")
        return value

    def integers(self, key: str, default: list[int]) -> list[int]:
        """A non-empty list of positive integers (a single integer is accepted as one item)."""
        value = self.data.get(key, default)
        value = [value] if isinstance(value, int) else value
        ok = isinstance(value, list) and value and all(isinstance(v, int) and v >= 1 for v in value)
        if not ok or any(isinstance(v, bool) for v in value):
            raise self.fail(key, "a non-empty list of integers >= 1")
        return list(value)

    def boolean(self, key: str, default: bool) -> bool:
        """A JSON true/false."""
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false")
        return value

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        """One of ``choices``."""
        value = self.data.get(key, default)
        if value not in choices:
            raise self.fail(key, f"one of {list(choices)}")
        return str(value)

    def name(self, key: str, default: str) -> str:
        """A name of 1-100 letters, digits, '-', '_', '.' or '/' (e.g. a Hugging Face model id)."""
        value = self.data.get(key, default)
        ok = isinstance(value, str) and 0 < len(value) <= 100
        if not ok or not value.translate(NAME_PUNCTUATION).isalnum():
            raise self.fail(key, "1-100 letters, digits, '-', '_', '.' or '/'")
        return str(value)

    def refuse(self, keys: tuple[str, ...], reason: str) -> None:
        """Refuse any of ``keys`` that is given: it does not apply (``reason`` says why)."""
        for key in keys:
            if key in self.data:
                raise SpecError(f"{self.workload} spec: {key}: does not apply to {reason}; remove it")

    def strings(self, key: str, choices: tuple[str, ...], default: list[str]) -> list[str]:
        """A non-empty list drawn from ``choices``."""
        value = self.data.get(key, default)
        if not isinstance(value, list) or not value or any(v not in choices for v in value):
            raise self.fail(key, f"a non-empty list from {list(choices)}")
        return [str(v) for v in value]

    def target_dir(self) -> str:
        """The scratch directory: absolute, existing, a directory, writable."""
        path = self.data.get("target_dir")
        if not isinstance(path, str) or not os.path.isabs(path):
            raise self.fail("target_dir", "an absolute path")
        if not os.path.isdir(path):
            raise self.fail("target_dir", "an existing directory (the agent never creates the target)")
        if not os.access(path, os.W_OK | os.X_OK):
            raise self.fail("target_dir", "a directory this user may write")
        return path

    def common(self) -> dict[str, Any]:
        """The settings every workload shares, validated."""
        return {
            "target_dir": self.target_dir(),
            "seed": self.integer("seed", 1, minimum=0),
            "io_bytes": self.integer("io_bytes", DEFAULT_IO_BYTES, minimum=4096, multiple_of=4096),
            "direct": self.boolean("direct", True),
            "drop_caches": self.boolean("drop_caches", True),
            "checksum": self.choice("checksum", ALGORITHMS, "crc32"),
            "keep_files": self.boolean("keep_files", False),
        }


def require_space(path: str, needed_bytes: int, workload: str) -> None:
    """Refuse to start a run that cannot fit: free bytes under ``path`` must exceed the need by 5 %."""
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    if free < needed_bytes * 1.05:
        raise SpecError(f"{workload}: {path} has {free} bytes free; the workload writes {needed_bytes} bytes")


def pattern_of(common: dict[str, Any]) -> Pattern:
    """The content pattern of a workload's common settings (seed, io_bytes, checksum)."""
    return Pattern(seed=common["seed"], cell_bytes=common["io_bytes"], algorithm=common["checksum"])


@dataclass(frozen=True)
class WorkloadRun:
    """What every phase of one workload run works with."""

    cfg: dict[str, Any]  # the validated spec
    pattern: Pattern  # the content written and verified
    dir: RunDir
    result: dict[str, Any]  # the result fields, filled as the phases end
    log: EventLog
    stop: threading.Event


@contextlib.contextmanager
def workload_run(
    cfg: dict[str, Any], workload: str, data: Any, *, writes_bytes: int, log: EventLog, stop: threading.Event
) -> Iterator[WorkloadRun]:
    """A run of ``workload`` in a fresh directory named by the spec's run_id, once room for
    ``writes_bytes`` is checked; its result starts with ``run_dir``. The run's files are removed
    at the end, whatever happened, unless keep_files."""
    pattern = pattern_of(cfg)
    require_space(cfg["target_dir"], writes_bytes, workload)
    run_dir = RunDir.create(cfg["target_dir"], workload, data.get("run_id"))
    run = WorkloadRun(cfg, pattern, run_dir, {"run_dir": run_dir.path}, log, stop)
    try:
        yield run
    finally:
        if not cfg["keep_files"]:
            run.result["cleanup"] = run_dir.cleanup()


class RunDir:
    """A fresh directory under the target that holds every file this run writes.

    >>> import tempfile
    >>> run = RunDir.create(tempfile.mkdtemp(), "checkpoint", "t1")
    >>> open(run.file("a.bin"), "w").close()
    >>> run.cleanup()
    {'removed_files': 1, 'run_dir_removed': True, 'error': None}
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.created: list[str] = []
        self.created_dirs: list[str] = []
        self._dirs = {path}

    @classmethod
    def create(cls, target: str, workload: str, run_id: Any) -> RunDir:
        """mkdir ``kvgate-<workload>-<run id>`` under ``target``; refuses an existing one."""
        rid = run_id or time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"
        if not isinstance(rid, str) or not rid.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise SpecError(
                f"{workload} spec: run_id: expected letters, digits, '-', '_' or '.', got {rid!r}"
            )
        path = os.path.join(target, f"kvgate-{workload}-{rid}")
        try:
            os.mkdir(path)
        except FileExistsError:
            raise SpecError(f"{workload} spec: run directory {path} already exists") from None
        return cls(path)

    def file(self, name: str) -> str:
        """The path of a new file in the run directory (its subdirectories made), remembered for cleanup."""
        parts = name.split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"run directory file name must be a plain relative path, got {name!r}")
        parent = self.path
        for part in parts[:-1]:
            parent = os.path.join(parent, part)
            if parent not in self._dirs:
                os.makedirs(parent, exist_ok=True)
                self._dirs.add(parent)
                self.created_dirs.append(parent)
        path = os.path.join(self.path, name)
        self.created.append(path)
        return path

    def cleanup(self) -> dict[str, Any]:
        """Remove the files this run created, then its subdirectories (deepest first), then the run dir."""
        removed = 0
        for path in self.created:
            try:
                os.unlink(path)
                removed += 1
            except FileNotFoundError:
                pass
        for path in reversed(self.created_dirs):  # a child is always made after its parent
            with contextlib.suppress(OSError):  # not empty: a foreign file stays
                os.rmdir(path)
        try:
            os.rmdir(self.path)
        except OSError as exc:
            return {"removed_files": removed, "run_dir_removed": False, "error": exc.strerror}
        return {"removed_files": removed, "run_dir_removed": True, "error": None}
