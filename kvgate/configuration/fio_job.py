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
        "name",
        "rw",
        "readwrite",
        "bs",
        "blocksize",
        "iodepth",
        "numjobs",
        "size",
        "filesize",
        "runtime",
        "ramp_time",
        "time_based",
        "direct",
        "buffered",
        "ioengine",
        "verify",
        "filename",
        "directory",
        "group_reporting",
        "output",
        "output-format",
        "create_only",
    }
)
# what `extra` may set: tuning that neither names a file nor runs a command (exec_prerun,
# write_*_log, opendir, filename_format, ioscheduler, include … are refused)
EXTRA_OPTIONS = frozenset(
    [
        "description",
        "rate",
        "rate_iops",
        "rate_min",
        "rwmixread",
        "rwmixwrite",
        "norandommap",
        "randrepeat",
        "random_distribution",
        "thinktime",
        "fsync",
        "fdatasync",
        "end_fsync",
        "invalidate",
        "zero_buffers",
        "refill_buffers",
        "buffer_compress_percentage",
        "offset",
        "io_size",
        "loops",
        "nrfiles",
        "file_service_type",
        "hipri",
        "fixedbufs",
        "registerfiles",
        "sqthread_poll",
        "cpus_allowed",
        "numa_cpu_nodes",
        "do_verify",
        "verify_fatal",
        "verify_backlog",
        "percentile_list",
        "startdelay",
        "gtod_reduce",
        "thread",
        "iodepth_batch_submit",
        "iodepth_batch_complete_min",
        "blockalign",
        "bssplit",
    ]
)
# every option a kvgate job file may contain: what to_jobfile renders, and the extras
RENDERED = frozenset(
    [
        "ioengine",
        "direct",
        "time_based",
        "runtime",
        "ramp_time",
        "create_only",
        "rw",
        "bs",
        "iodepth",
        "numjobs",
        "size",
        "filename",
        "directory",
        "verify",
    ]
)
JOBFILE_OPTIONS = RENDERED | EXTRA_OPTIONS
TARGET_OPTIONS = ("filename", "directory")
# I/O engines that read and write the target only (exec runs programs, http/nbd/rbd/net reach
# other machines, external: loads a library, filedelete/dirdelete remove files)
IOENGINES = frozenset(["libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "posixaio", "mmap"])
# `fio --cmdhelp=verify` of fio 3.33 (this machine's): the names its verify= accepts
VERIFY_NAMES = frozenset(
    [
        "0",
        "md5",
        "crc64",
        "crc32",
        "crc32c-intel",
        "crc32c",
        "crc16",
        "crc7",
        "sha1",
        "sha256",
        "sha512",
        "sha3-224",
        "sha3-256",
        "sha3-384",
        "sha3-512",
        "xxhash",
        "meta",
        "pattern",
        "null",
    ]
)
MAX_VALUE_CHARS = 1024  # fio reads a job file line in pieces of 4095: a longer line would split in two
_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_SIZE = re.compile(r"(\d+)([kmgtp]?)(?:i?b)?", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_OPTION = re.compile(r"[a-z][a-z0-9_]*")
# a target path fio reads as one path: ':' separates several files or directories, '$' expands
# the environment, '\\' escapes, blanks and control characters end or split the value
_PATH = re.compile(r"/[A-Za-z0-9._/+@%,~-]*")
# a free-text value: one line, no second '=' nor section syntax, no ${ENV} expansion
_VALUE = re.compile(r"[^\x00-\x1f\x7f=$\[\]]*")


def parse_size(text: str | int) -> int:
    """fio size text → bytes, with fio's default kb_base=1024 ("4k" is 4096, "1MiB" too).

    >>> parse_size("4k"), parse_size("1MiB"), parse_size(512)
    (4096, 1048576, 512)
    """
    if isinstance(text, int):
        return text
    m = _SIZE.fullmatch(text)
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
        """Every rule the job breaks; the ones that make rendering unsafe come first."""
        if not _counts(self) or not all(isinstance(t, str) for t in (self.name, self.rw, self.ioengine)):
            return ["name, rw and ioengine must be text; runtime_s, ramp_s, iodepth, numjobs whole numbers"]
        checks = [
            (_NAME.fullmatch(self.name) is not None, "name must match [A-Za-z0-9][A-Za-z0-9_.-]* (≤ 128)"),
            (self.rw in READ_MODES | WRITE_MODES, f"unknown rw {self.rw!r}"),
            ((self.filename is None) != (self.directory is None), "set exactly one of filename, directory"),
            (self.runtime_s >= 1, f"time_based needs runtime_s ≥ 1, got {self.runtime_s}"),
            (0 <= self.ramp_s < self.runtime_s, f"need 0 ≤ ramp_s < runtime_s, got {self.ramp_s}"),
            (self.iodepth >= 1 and self.numjobs >= 1, "iodepth and numjobs must be ≥ 1"),
            (
                is_size(self.bs) and is_size(self.size),
                f"bs and size must be fio sizes > 0 like 4k, 1m or 16g, got {self.bs!r} and {self.size!r}",
            ),
            (self.ioengine in IOENGINES, f"ioengine must be one of {', '.join(sorted(IOENGINES))}"),
            (
                self.verify is None or self.verify in VERIFY_NAMES,
                f"verify must be one of fio's {', '.join(sorted(VERIFY_NAMES))}; got {self.verify!r}",
            ),
        ]
        problems = [msg for ok, msg in checks if not ok]
        problems += [p for p in [target_problem(self.target)] if p and self.filename != self.directory]
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


def is_size(text: object) -> bool:
    """True for a fio size > 0 written the way kvgate renders it (no blanks, one line)."""
    if not isinstance(text, str | int) or isinstance(text, bool):
        return False
    try:
        return parse_size(text) > 0
    except ValueError:
        return False


def target_problem(path: str) -> str | None:
    """Why fio would not read ``path`` as one absolute path (see _PATH), or None."""
    if _PATH.fullmatch(path) and len(path) <= MAX_VALUE_CHARS:
        return None
    return (
        f"target {path!r} must be an absolute path of letters, digits and ._/+@%,~- only "
        "(fio splits ':', expands '$', and a blank or line break would end the value)"
    )


def value_problem(value: str) -> str | None:
    """Why ``value`` is not one free-text fio value (one line, no '=', '$' or brackets), or None."""
    if _VALUE.fullmatch(value) and len(value) <= MAX_VALUE_CHARS:
        return None
    return f"value {value!r} is not a single fio option value (no line breaks, '=', '$', '[' or ']')"


def _counts(job: FioJob) -> bool:
    values = (job.runtime_s, job.ramp_s, job.iodepth, job.numjobs)
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _extra_problem(key: str, value: str) -> str | None:
    """Why an ``extra`` option is refused, or None."""
    if key in MANAGED:
        return f"extra option {key!r} is managed by kvgate; use the FioJob field"
    if not _OPTION.fullmatch(key) or value_problem(value):
        return f"extra option {key!r}={value!r} is not a single fio option line"
    if key not in EXTRA_OPTIONS:
        return f"extra option {key!r} is not one kvgate allows (it may name a file or run a command)"
    return None
