"""integrity: beside the soak's engines, data written on the candidate volume and read back, for hours.

Every ``cycle_s``, until the soak it follows has ended (its state directory's ``exit_code``):

1. **fio** (integrity_fio): the previous cycle's file verified at rest, then written anew with
   a crc32c per block and read back;
2. **checkpoint**: a new checkpoint file of pattern cells written with fsync, read back and every
   cell compared with its checksum (content.Pattern); the one before it removed;
3. **KV chunks**: chunk files written once at the start, restored (read back) every cycle and every
   cell compared with its checksum: data at rest for the whole soak.

A mismatch or an I/O error is a failure naming the file, offset and time; nothing is retried. All
I/O is paced to ``rate_bytes_per_s`` (the share of the device the G4 profile gives it). A
``cycle`` event carries each cycle; its ``cpu_s`` is this process's own CPU (fio's is the load).
"""

from __future__ import annotations

import contextlib
import os
import resource
import threading
import time
from typing import Any

from kvgate.probes.agent.content import Pattern, cell_count
from kvgate.probes.agent.events import EventLog
from kvgate.probes.agent.integrity_fio import FioLoad, failure
from kvgate.probes.agent.odirect import DirectTracker, aligned_buffer, alignment_for, open_file, read_range
from kvgate.probes.agent.readers import Cell, Verifier
from kvgate.probes.agent.spec import Spec, workload_run
from kvgate.probes.agent.writers import CellWriter

KEYS = (
    "duration_s",
    "cycle_s",
    "follow_state_dir",
    "rate_bytes_per_s",
    "fio_bytes",
    "fio_block_bytes",
    "checkpoint_bytes",
    "kv_chunk_bytes",
    "kv_chunks",
    "fio",
)
CHECKPOINT_ID = 1 << 32  # file ids of checkpoints: CHECKPOINT_ID + cycle; KV chunks: their index


def parse(data: Any) -> dict[str, Any]:
    """Validate an integrity spec."""
    spec = Spec(data, "integrity", KEYS)
    cfg = spec.common()
    for key in (
        "duration_s",
        "cycle_s",
        "rate_bytes_per_s",
        "fio_bytes",
        "checkpoint_bytes",
        "kv_chunk_bytes",
    ):
        cfg[key] = spec.integer(key)
    cfg["fio_block_bytes"] = spec.integer("fio_block_bytes", 65536, minimum=4096, multiple_of=4096)
    cfg["kv_chunks"] = spec.integer("kv_chunks")
    follow = data.get("follow_state_dir")
    if follow is not None and not (isinstance(follow, str) and os.path.isabs(follow)):
        raise spec.fail("follow_state_dir", "an absolute path (the soak's agent state directory) or null")
    cfg["follow_state_dir"] = follow
    cfg["fio"] = spec.name("fio", "fio")
    return cfg


class Pacer:
    """Sleeps so that the bytes done stay at or below ``rate`` per second since it started."""

    def __init__(self, rate: int, stop: threading.Event) -> None:
        self.rate, self.stop, self.done, self.start = rate, stop, 0, time.monotonic()

    def add(self, n: int) -> None:
        self.done += n
        ahead = self.done / self.rate - (time.monotonic() - self.start)
        if ahead > 0:
            self.stop.wait(ahead)


class CellFiles:
    """Pattern files written and read back cell by cell, every cell checked, failures located in time."""

    def __init__(
        self, pattern: Pattern, *, direct: bool, align: int, pacer: Pacer, stop: threading.Event
    ) -> None:
        self.pattern, self.direct, self.align, self.pacer, self.stop = pattern, direct, align, pacer, stop
        self.tracker = DirectTracker(direct)
        self.writer = CellWriter(pattern, direct=direct, tracker=self.tracker, align=align)
        self.buf = aligned_buffer(pattern.cell_bytes + 2 * align)

    def write(self, path: str, size: int, file_id: int) -> list[dict[str, Any]]:
        """Create, write, fsync ``path``; a failed write is a failure (the file is not read back)."""
        try:
            self.writer.write_file(path, size, file_id=file_id, stop=self.stop)
        except OSError as exc:
            return [_failure("write-error", path, None, size, f"{type(exc).__name__}: {exc}")]
        self.pacer.add(size)
        return []

    def verify(self, path: str, size: int, file_id: int) -> tuple[int, list[dict[str, Any]]]:
        """Read every cell of ``path`` and compare it with its checksum; (bytes verified, failures)."""
        verifier, done, out = Verifier(self.pattern), 0, []
        cell_bytes = self.pattern.cell_bytes
        try:
            fd = open_file(path, os.O_RDONLY, direct=self.direct, tracker=self.tracker)
        except OSError as exc:
            return 0, [_failure("read-error", path, 0, size, f"{type(exc).__name__}: {exc}")]
        try:
            for k in range(cell_count(size, cell_bytes)):
                if self.stop.is_set():
                    break
                cell = Cell(path, file_id, k, k * cell_bytes, min(cell_bytes, size - k * cell_bytes))
                try:
                    data = read_range(fd, self.buf, cell.offset, cell.length, self.align)
                except OSError as exc:  # not retried: a read error is a failure
                    out.append(
                        _failure("read-error", path, cell.offset, cell.length, f"{type(exc).__name__}: {exc}")
                    )
                    continue
                verifier.check(cell, data)
                done += cell.length
                self.pacer.add(cell.length)
        finally:
            os.close(fd)
        for c in verifier.corrupt:
            detail = (
                f"{self.pattern.algorithm} {c['actual_digest']} != {c['expected_digest']} (cell {c['cell']})"
            )
            out.append(_failure("mismatch", c["file"], c["offset_bytes"], None, detail))
        return done, out


def _failure(kind: str, file: str, offset: int | None, length: int | None, detail: str) -> dict[str, Any]:
    source = "checkpoint" if "/checkpoint/" in file else "kv"
    return failure(kind, file, source=source, offset=offset, length=length, detail=detail)


def soak_ended(cfg: dict[str, Any]) -> bool:
    follow = cfg["follow_state_dir"]
    return bool(follow) and os.path.exists(os.path.join(follow, "exit_code"))


def cpu_s() -> float:
    """This process's own CPU seconds (user + system; fio's are its children's)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(data: Any, log: EventLog, stop: threading.Event) -> dict[str, Any]:
    """Cycles of fio, checkpoint and KV-chunk integrity until the soak ended, the duration or a stop."""
    cfg = parse(data)
    need = cfg["fio_bytes"] + 2 * cfg["checkpoint_bytes"] + cfg["kv_chunks"] * cfg["kv_chunk_bytes"]
    with workload_run(cfg, "integrity", data, writes_bytes=need, log=log, stop=stop) as wr:
        cycles = Cycles(cfg, wr.pattern, wr.dir, log, stop)
        wr.result.update(cycles.run())
    return wr.result


class Cycles:
    """One integrity run's files and its cycles."""

    def __init__(
        self, cfg: dict[str, Any], pattern: Pattern, run_dir: Any, log: EventLog, stop: threading.Event
    ) -> None:
        self.cfg, self.dir, self.log, self.stop = cfg, run_dir, log, stop
        self.pacer = Pacer(cfg["rate_bytes_per_s"], stop)
        align = alignment_for(run_dir.path)
        self.files = CellFiles(pattern, direct=cfg["direct"], align=align, pacer=self.pacer, stop=stop)
        fio_dir = os.path.dirname(run_dir.file("fio/integrity.fio"))
        for name in ("fio.dat", "last.json", "local-integrity-0-verify.state"):
            run_dir.file(f"fio/{name}")  # removed with the run
        self.fio = FioLoad(
            fio_dir,
            size=cfg["fio_bytes"],
            bs=cfg["fio_block_bytes"],
            rate=cfg["rate_bytes_per_s"],
            direct=cfg["direct"],
            fio=cfg["fio"],
        )
        self.kv = [run_dir.file(f"kv/chunk-{i:05d}.kv") for i in range(cfg["kv_chunks"])]
        self.totals: dict[str, Any] = {"cycles": 0, "failures": 0, "verified_bytes": 0, "written_bytes": 0}

    def run(self) -> dict[str, Any]:
        start, cpu0 = time.monotonic(), cpu_s()
        kv_fail = [
            f for i, p in enumerate(self.kv) for f in self.files.write(p, self.cfg["kv_chunk_bytes"], i)
        ]
        self.totals["written_bytes"] += len(self.kv) * self.cfg["kv_chunk_bytes"]
        k = 0
        while not self.stop.is_set() and time.monotonic() - start < self.cfg["duration_s"]:
            began = time.monotonic()
            event = self.cycle(k, kv_fail if k == 0 else [])
            self.log.emit("cycle", **event)
            k += 1
            if soak_ended(self.cfg):
                break
            self.stop.wait(max(0.0, began + self.cfg["cycle_s"] - time.monotonic()))
        wall = time.monotonic() - start
        return {**self.totals, "wall_s": wall, "cpu_s": cpu_s() - cpu0, "direct": self.files.tracker.report()}

    def cycle(self, k: int, failures: list[dict[str, Any]]) -> dict[str, Any]:
        """One cycle: fio, checkpoint, KV chunks; its bytes and failures."""
        event: dict[str, Any] = {"index": k, "start_unix_s": time.time()}
        cpu0 = cpu_s()
        fio = self.fio.cycle(self.cfg["seed"] + k + 1, self.stop)
        failures = failures + [f for p in fio.values() if p for f in p["failures"]]
        event["fio"] = {name: _fio_numbers(p) for name, p in fio.items() if p}
        event["checkpoint"], ck_fail = self.checkpoint(k)
        event["kv"], kv_fail = self.restore()
        failures += ck_fail + kv_fail
        fio_bytes = sum((p.get("written_bytes") or 0) + (p.get("read_bytes") or 0) for p in fio.values() if p)
        event.update(
            end_unix_s=time.time(),
            failures=failures,
            io_bytes=fio_bytes
            + event["checkpoint"]["written_bytes"]
            + event["checkpoint"]["verified_bytes"]
            + event["kv"]["verified_bytes"]
            + (len(self.kv) * self.cfg["kv_chunk_bytes"] if k == 0 else 0),
            cpu_s=cpu_s() - cpu0,
        )
        self.totals["cycles"] += 1
        self.totals["failures"] += len(failures)
        self.totals["verified_bytes"] += event["checkpoint"]["verified_bytes"] + event["kv"]["verified_bytes"]
        self.totals["written_bytes"] += event["checkpoint"]["written_bytes"]
        return event

    def checkpoint(self, k: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Write checkpoint ``k`` with fsync, read it back, remove checkpoint ``k - 1``."""
        size, path = self.cfg["checkpoint_bytes"], self.dir.file(f"checkpoint/step-{k:06d}.ckpt")
        fails = self.files.write(path, size, CHECKPOINT_ID + k)
        done = 0
        if not fails:
            done, fails = self.files.verify(path, size, CHECKPOINT_ID + k)
        if k:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.dir.path + f"/checkpoint/step-{k - 1:06d}.ckpt")
        return {
            "file": path,
            "written_bytes": 0 if fails and not done else size,
            "verified_bytes": done,
        }, fails

    def restore(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Every KV chunk read back and compared with its checksum."""
        done, fails = 0, []  # type: int, list[dict[str, Any]]
        for i, path in enumerate(self.kv):
            n, f = self.files.verify(path, self.cfg["kv_chunk_bytes"], i)
            done, fails = done + n, fails + f
        return {"chunks": len(self.kv), "verified_bytes": done}, fails


def _fio_numbers(p: dict[str, Any]) -> dict[str, Any]:
    return {k: p[k] for k in ("status", "seed", "written_bytes", "read_bytes")} | {
        "failures": len(p["failures"])
    }


__all__ = ["run"]
