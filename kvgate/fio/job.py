"""A typed fio job, rendered to a jobfile only at the edge (STYLE: workloads are typed objects).

Every rendered job is ``time_based`` with an explicit ``runtime`` and a ``ramp_time``
shorter than it (fio #1414: a runtime without time_based stops early), never uses
``group_reporting`` (kvgate aggregates per job itself, fio #2132) and never hides
an option the harness relies on behind ``extra``:

>>> job = FioJob(name="seqread", rw="read", bs="1m", iodepth=32, size="4g",
...              runtime_s=30, ramp_s=5, directory="/mnt/scratch/kvgate")
>>> print(job.to_jobfile())  # doctest: +NORMALIZE_WHITESPACE
; rendered by kvgate: do not edit
[global]
ioengine=libaio
direct=1
time_based=1
runtime=30
ramp_time=5
[seqread]
rw=read
bs=1m
iodepth=32
numjobs=1
size=4g
directory=/mnt/scratch/kvgate
<BLANKLINE>
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Literal

Rw = Literal["read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim"]
READ_MODES = frozenset({"read", "randread", "rw", "readwrite", "randrw"})
WRITE_MODES = frozenset({"write", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim"})

# options the harness owns: `extra` may not set them (fio #1414, #2132, #731)
MANAGED = frozenset(
    {
        "name", "rw", "readwrite", "bs", "blocksize", "iodepth", "numjobs", "size", "filesize",
        "runtime", "ramp_time", "time_based", "direct", "buffered", "ioengine", "verify",
        "filename", "directory", "group_reporting", "output", "output-format", "create_only",
    }
)  # fmt: skip
_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_SIZE = re.compile(r"(\d+)\s*([kmgtp]?)(?:i?b)?", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_OPTION = re.compile(r"[a-z][a-z0-9_]*")


def parse_size(text: str | int) -> int:
    """fio size text → bytes, with fio's default kb_base=1024 ("4k" is 4096, "1MiB" too).

    >>> parse_size("4k"), parse_size("1MiB"), parse_size(512)
    (4096, 1048576, 512)
    """
    if isinstance(text, int):
        return text
    m = _SIZE.fullmatch(text.strip())
    if not m:
        raise ValueError(f"expected a fio size like 4k, 1m, 16g or 1MiB, got {text!r}")
    return int(m[1]) * _SUFFIX[m[2].lower()]


def fio_size(n_bytes: int) -> str:
    """Bytes → the shortest exact fio size text (1048576 → "1m")."""
    for suffix in ("p", "t", "g", "m", "k"):
        if n_bytes and n_bytes % _SUFFIX[suffix] == 0:
            return f"{n_bytes // _SUFFIX[suffix]}{suffix}"
    return str(n_bytes)


@dataclass(frozen=True)
class FioJob:
    """One fio job section (with ``numjobs`` clones); validated on construction."""

    name: str
    rw: Rw
    bs: str = "1m"
    iodepth: int = 1
    numjobs: int = 1
    size: str = "1g"  # per clone for a directory target; the shared file's size for filename
    runtime_s: int = 60
    ramp_s: int = 5
    direct: bool = True
    ioengine: str = "libaio"
    verify: str | None = None  # e.g. "crc32c"
    filename: str | None = None  # a file or a raw block device
    directory: str | None = None  # fio creates <name>.<clone>.0 files here
    extra: tuple[tuple[str, str], ...] = ()  # further fio options, never a MANAGED one

    def __post_init__(self) -> None:
        for problem in self._problems():
            raise ValueError(f"fio job {self.name!r}: {problem}")

    def _problems(self) -> list[str]:
        """Every rule the job breaks, first the ones that make rendering unsafe."""
        checks = [
            (_NAME.fullmatch(self.name) is not None, "name must match [A-Za-z0-9][A-Za-z0-9_.-]*"),
            (self.rw in READ_MODES | WRITE_MODES, f"unknown rw {self.rw!r}"),
            ((self.filename is None) != (self.directory is None), "set exactly one of filename, directory"),
            (self.runtime_s >= 1, f"time_based needs runtime_s ≥ 1, got {self.runtime_s}"),
            (0 <= self.ramp_s < self.runtime_s, f"need 0 ≤ ramp_s < runtime_s, got {self.ramp_s}"),
            (self.iodepth >= 1 and self.numjobs >= 1, "iodepth and numjobs must be ≥ 1"),
            (_positive_size(self.bs) and _positive_size(self.size), "bs and size must be fio sizes > 0"),
            (_NAME.fullmatch(self.ioengine) is not None, f"bad ioengine {self.ioengine!r}"),
        ]
        problems = [msg for ok, msg in checks if not ok]
        return problems + [p for key, value in self.extra if (p := _extra_problem(key, value))]

    @property
    def bs_bytes(self) -> int:
        return parse_size(self.bs)

    @property
    def size_bytes(self) -> int:
        return parse_size(self.size)

    @property
    def target(self) -> str:
        """The file, device or directory fio does I/O on."""
        return self.filename or self.directory or ""

    @property
    def reads(self) -> bool:
        return self.rw in READ_MODES

    @property
    def writes(self) -> bool:
        """True when fio writes to the target during the measured run."""
        return self.rw in WRITE_MODES

    @property
    def working_set_bytes(self) -> int:
        """Bytes the job touches: one file per clone for a directory, a shared file otherwise."""
        return self.size_bytes * (self.numjobs if self.directory else 1)

    def replace(self, **changes: object) -> FioJob:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def to_jobfile(self, *, layout_only: bool = False) -> str:
        """Render the jobfile; ``layout_only`` lays out the files and does no I/O (create_only)."""
        head = [f"ioengine={self.ioengine}", f"direct={int(self.direct)}", "time_based=1"]
        head += [f"runtime={self.runtime_s}", f"ramp_time={self.ramp_s}"]
        head += ["create_only=1"] if layout_only else []
        body = [f"rw={self.rw}", f"bs={self.bs}", f"iodepth={self.iodepth}", f"numjobs={self.numjobs}"]
        body += [f"size={self.size}", f"{'filename' if self.filename else 'directory'}={self.target}"]
        body += [f"verify={self.verify}"] if self.verify else []
        body += [f"{k}={v}" for k, v in self.extra]
        lines = ["; rendered by kvgate: do not edit", "[global]", *head, f"[{self.name}]", *body]
        return "\n".join(lines) + "\n"


def _positive_size(text: str) -> bool:
    try:
        return parse_size(text) > 0
    except ValueError:
        return False


def _extra_problem(key: str, value: str) -> str | None:
    """Why an ``extra`` option is refused, or None."""
    if key in MANAGED:
        return f"extra option {key!r} is managed by kvgate; use the FioJob field"
    if not _OPTION.fullmatch(key) or "\n" in value or "\r" in value:
        return f"extra option {key!r}={value!r} is not a single fio option line"
    return None
