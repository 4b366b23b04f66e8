"""model-load: generate a sharded safetensors model, then load it cold with each loader.

Loaders (FIELD-NOTES "model loading": record which one actually ran):
- ``sequential``: one thread, buffered reads of each file in order (header, then data);
- ``parallel``: the data sections cut into io_bytes cells, read by T threads with O_DIRECT;
- ``safetensors``: the safetensors library itself (numpy backend) when the host has it,
  otherwise reported as unavailable with the import error — never emulated.
Every loader verifies every cell of tensor data against the generation record.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from kvgate.probes.agent.cold import cold_window
from kvgate.probes.agent.events import Cancelled, EventLog, Progress
from kvgate.probes.agent.model_files import CellStream, ModelFile, describe, generate, name_tensors
from kvgate.probes.agent.odirect import DirectTracker, alignment_for
from kvgate.probes.agent.readers import BufferPair, CellReader, Verifier, VerifyPool, make_readers, read_cells
from kvgate.probes.agent.safetensors_io import DTYPE_BYTES, read_header, tensors_by_offset
from kvgate.probes.agent.spec import Spec, WorkloadRun, workload_run
from kvgate.probes.agent.stats import rate

if TYPE_CHECKING:  # annotations only: python 3.8 cannot subscript collections.abc at run time
    from collections.abc import Callable, Iterator

LOADERS = ("sequential", "parallel", "safetensors")
KEYS = (
    "model_bytes",
    "shards",
    "hidden_size",
    "intermediate_size",
    "kv_dim",
    "tensor_dtype",
    "loaders",
    "threads",
)


def parse(data: Any) -> dict[str, Any]:
    """Validate a model-load spec."""
    spec = Spec(data, "model-load", KEYS)
    cfg = spec.common()
    cfg["model_bytes"] = spec.integer("model_bytes", minimum=1 << 20)
    cfg["shards"] = spec.integer("shards")
    cfg["hidden_size"] = spec.integer("hidden_size", 4096)
    cfg["intermediate_size"] = spec.integer("intermediate_size", 4 * cfg["hidden_size"])
    cfg["kv_dim"] = spec.integer("kv_dim", cfg["hidden_size"] // 8)
    cfg["tensor_dtype"] = spec.choice("tensor_dtype", tuple(DTYPE_BYTES), "F16")
    cfg["loaders"] = spec.strings("loaders", LOADERS, list(LOADERS))
    cfg["threads"] = spec.integer("threads", 8)
    return cfg


def run(data: Any, log: EventLog, stop: threading.Event) -> dict[str, Any]:
    """Generate the shards, then one cold load per loader."""
    cfg = parse(data)
    with workload_run(cfg, "model-load", data, writes_bytes=cfg["model_bytes"], log=log, stop=stop) as run:
        run.result.update(io_bytes=cfg["io_bytes"], threads=cfg["threads"])
        progress = Progress(log, "generate", cfg["model_bytes"])
        start = time.monotonic()
        files = generate(run.dir, cfg, run.pattern, progress, stop)
        progress.close()
        run.result["generate"] = describe(files, run.pattern)
        run.result["generate"]["elapsed_s"] = time.monotonic() - start
        run.result["loads"] = [load(run, name, files) for name in cfg["loaders"]]
    return run.result


def load(run: WorkloadRun, name: str, files: list[ModelFile]) -> dict[str, Any]:
    """Drop caches, run one loader inside a cold window, verify, report."""
    cfg, log = run.cfg, run.log
    missing = library_missing() if name == "safetensors" else None
    if missing:
        return {"loader": name, "status": "unavailable", "reason": missing}
    total = sum(f.data_bytes for f in files)
    verifier = Verifier(run.pattern)
    tracker = DirectTracker(cfg["direct"] and name == "parallel")
    progress = Progress(log, f"load-{name}", total, loader=name)
    with VerifyPool(verifier) as pool, prepared(name, files, pool, cfg, tracker) as loader:
        window = cold_window(
            os.path.dirname(files[0].path), drop=cfg["drop_caches"], data_bytes=total, log=log
        )
        start = time.monotonic()
        out = loader(progress, run.stop)
        elapsed = time.monotonic() - start
    out.update({"loader": name, "status": "ok", "cold": window.end(total), "elapsed_s": elapsed})
    out.update({"read_bytes": total, "read_bytes_per_s": rate(total, elapsed)})
    progress.close()
    out.update(verifier.report())
    name_tensors(files, verifier)
    out.update(tracker.report())
    return out


@contextlib.contextmanager
def prepared(
    name: str, files: list[ModelFile], pool: VerifyPool, cfg: dict[str, Any], tracker: DirectTracker
) -> Iterator[Callable[[Progress, threading.Event], dict[str, Any]]]:
    """The loader as ``loader(progress, stop)``, its read buffers allocated and faulted in beforehand.

    Like fio, which sets up its buffers before its runtime starts, the measured window
    holds the load itself (headers, reads, verification), not the agent's set-up.
    """
    if name == "sequential":
        yield lambda progress, stop: load_sequential(files, pool, progress, stop)
    elif name == "safetensors":
        yield lambda progress, stop: load_library(files, pool, progress, stop)
    else:
        readers = make_readers(
            cfg["threads"],
            io_bytes=pool.verifier.pattern.cell_bytes,
            align=alignment_for(files[0].path),
            direct=tracker.requested,
            tracker=tracker,
        )
        try:
            yield lambda progress, stop: load_parallel(files, readers, pool, progress, stop)
        finally:
            for reader in readers:
                reader.close()


def load_sequential(
    files: list[ModelFile], pool: VerifyPool, progress: Progress, stop: threading.Event
) -> dict[str, Any]:
    """One thread reads each file in order through the page cache, like the default path."""
    cell_bytes = pool.verifier.pattern.cell_bytes
    pair = BufferPair(lambda: bytearray(cell_bytes))
    for f in files:
        with open(f.path, "rb", buffering=0) as fh:
            data_start, _header = read_header(fh)
            for cell in f.cells(cell_bytes):
                if stop.is_set():
                    raise Cancelled("stopped while loading")
                k, buf = pair.take()
                view = memoryview(buf)[: cell.length]
                if fh.readinto(view) != cell.length or data_start != f.data_start:
                    raise OSError(f"{f.path}: short read at {cell.offset}")
                pair.submit(k, pool, cell, view)
                progress.add(cell.length)
    pair.drain()
    return {"threads": 1}


def load_parallel(
    files: list[ModelFile],
    readers: list[CellReader],
    pool: VerifyPool,
    progress: Progress,
    stop: threading.Event,
) -> dict[str, Any]:
    """Parse every header, then one thread per reader reads all data cells with aligned (direct) I/O."""
    for f in files:
        with open(f.path, "rb") as fh:
            read_header(fh)
    cells = [cell for f in files for cell in f.cells(pool.verifier.pattern.cell_bytes)]
    read_cells(cells, readers, pool=pool, progress=progress, stop=stop)
    return {"threads": len(readers)}


def library_missing() -> str | None:
    """Why the safetensors loader cannot run here, or None when it can."""
    try:
        import numpy  # noqa: F401  # the numpy backend needs it
        import safetensors  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError as exc:
        return f"safetensors (numpy backend) is not importable on this host: {exc}"
    return None


def load_library(
    files: list[ModelFile], pool: VerifyPool, progress: Progress, stop: threading.Event
) -> dict[str, Any]:
    """safetensors.safe_open(framework="numpy"), tensor by tensor in file order."""
    import safetensors  # type: ignore[import-not-found,unused-ignore]

    for f in files:
        stream = CellStream(f, pool)
        with safetensors.safe_open(f.path, framework="numpy") as st:
            for begin, end, name in tensors_by_offset(read_header_of(f.path)):
                if stop.is_set():
                    raise Cancelled("stopped while loading")
                stream.feed(st.get_tensor(name))
                progress.add(end - begin)
        if not stream.complete():
            raise OSError(f"{f.path}: the library returned fewer bytes than the data section holds")
    return {"threads": 1, "library_version": getattr(safetensors, "__version__", None)}


def read_header_of(path: str) -> dict[str, Any]:
    """The validated header of a safetensors file."""
    with open(path, "rb") as fh:
        return read_header(fh)[1]
