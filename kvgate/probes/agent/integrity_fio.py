"""The integrity load's fio part: a crc32c-verified random write, and its data verified again at rest.

Every cycle first re-reads what the previous cycle wrote (``--verify_only`` with the seed it was
written with, its saved verify state loaded: a pass cut short is verified only as far as it
wrote), then writes the file anew with another seed and reads every block back (``do_verify``).
fio's own checksum (crc32c per block, its header naming offset and seed) finds a bad block; its
stderr names the file and offset, which become a failure here, with the time it was seen. An
I/O error is a failure too: nothing is retried.

>>> f = failures_in("crc32c: verify failed at file /s/fio.dat offset 65536, length 4096 (requested", 9.0)
>>> [(x["kind"], x["file"], x["offset_bytes"], x["length_bytes"], x["time_unix_s"]) for x in f]
[('mismatch', '/s/fio.dat', 65536, 4096, 9.0)]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from typing import Any

JOB = """; written by the kvgate agent (integrity load)
[integrity]
filename={file}
size={size}
bs={bs}
rw=randwrite
ioengine=psync
direct={direct}
verify=crc32c
do_verify=1
verify_fatal=1
verify_state_save=1
rate={rate}
"""
# fio's verify.c and io_u.c messages: where a block failed, and where an I/O failed
_MISMATCH = re.compile(r"at file (?P<file>\S+) offset (?P<offset>\d+), length (?P<length>\d+)")
_IO_ERROR = re.compile(
    r"io_u error on file (?P<file>\S+): .*?(?:read|write) offset=(?P<offset>\d+), buflen=(?P<length>\d+)"
)
STDERR_KEEP = 4000


def failures_in(stderr: str, seen_unix_s: float) -> list[dict[str, Any]]:
    """Every failed block or I/O fio reported on stderr, with the time it was seen."""
    out = []
    for line in stderr.splitlines():
        found = _MISMATCH.search(line), _IO_ERROR.search(line)
        m = found[0] or found[1]
        if m is None:
            continue
        kind = "mismatch" if found[0] else ("write-error" if " write offset=" in line else "read-error")
        where = {"offset": int(m["offset"]), "length": int(m["length"])}
        out.append(failure(kind, m["file"], source="fio", detail=line, t=seen_unix_s, **where))
    return out


def failure(
    kind: str,
    file: str,
    *,
    source: str,
    offset: int | None,
    length: int | None,
    detail: str,
    t: float | None = None,
) -> dict[str, Any]:
    """One integrity failure: what, where (file, offset, length) and when (seen now unless ``t``)."""
    return {
        "kind": kind,
        "source": source,
        "file": file,
        "offset_bytes": offset,
        "length_bytes": length,
        "time_unix_s": time.time() if t is None else t,
        "detail": detail.strip()[:400],
    }


class FioLoad:
    """The fio file of one integrity run: its job file, the seed of its last complete write."""

    def __init__(
        self, fio_dir: str, *, size: int, bs: int, rate: int, direct: bool, fio: str = "fio"
    ) -> None:
        self.dir, self.fio = fio_dir, fio
        self.file = os.path.join(fio_dir, "fio.dat")
        self.jobfile = os.path.join(fio_dir, "integrity.fio")
        job = JOB.format(file=self.file, size=size, bs=bs, rate=rate, direct=int(direct))
        with open(self.jobfile, "w") as f:
            f.write(job)
        self.written_seed: int | None = None

    def cycle(self, seed: int, stop: threading.Event) -> dict[str, Any]:
        """Verify the previous write at rest (if any), then write and verify with ``seed``."""
        out: dict[str, Any] = {"rest": None}
        if self.written_seed is not None:
            out["rest"] = self.run(["--verify_only", "--verify_state_load=1"], self.written_seed, stop)
        if not out["rest"] or not out["rest"]["failures"]:
            out["write"] = self.run([], seed, stop)
            self.written_seed = seed if out["write"]["status"] == "ok" else self.written_seed
        return out

    def run(self, extra: list[str], seed: int, stop: threading.Event) -> dict[str, Any]:
        """One fio pass; its bytes, failures, and how it ended (stopped: TERM, its state saved)."""
        output = os.path.join(self.dir, "last.json")
        argv = [self.fio, "--output-format=json", f"--output={output}", f"--aux-path={self.dir}"]
        argv += [f"--randseed={seed}", *extra, self.jobfile]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        stderr = _communicate(proc, stop)
        seen = time.time()
        fails = failures_in(stderr, seen)
        numbers = _numbers(output)
        if proc.returncode and not fails and not stop.is_set():  # fio failed without naming a block
            why = f"fio exit {proc.returncode}: {stderr[-300:]}"
            fails = [
                failure("fio-error", self.file, source="fio", offset=None, length=None, detail=why, t=seen)
            ]
        status = "stopped" if stop.is_set() else ("ok" if proc.returncode == 0 else "failed")
        return {"status": status, "seed": seed, **numbers, "failures": fails, "stderr": stderr[-STDERR_KEEP:]}


def _communicate(proc: subprocess.Popen[str], stop: threading.Event) -> str:
    """fio's stderr; a stop sends it SIGTERM, so it ends the pass and saves its verify state."""
    while True:
        try:
            return proc.communicate(timeout=0.5)[1] or ""
        except subprocess.TimeoutExpired:
            if stop.is_set():
                proc.terminate()


def _numbers(output: str) -> dict[str, Any]:
    """Written and read bytes of the pass, from fio's JSON (None where it wrote none)."""
    try:
        with open(output) as f:
            text = f.read()
        job = json.loads(text[text.index("{") :])["jobs"][0]
        return {"written_bytes": job["write"]["io_bytes"], "read_bytes": job["read"]["io_bytes"]}
    except (OSError, ValueError, KeyError, IndexError):
        return {"written_bytes": None, "read_bytes": None}
