"""Generate a sharded safetensors model on the target and describe it for the loaders.

The generation manifest records, per shard, where the data section starts,
its size and checksum (the digest of its cells' digests) and the tensor spans,
so a failed cell is reported with the tensors it belongs to.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from typing import Any

from kvgate.probes.agent.content import Pattern, cell_count
from kvgate.probes.agent.events import Progress
from kvgate.probes.agent.odirect import DirectTracker
from kvgate.probes.agent.readers import BufferPair, Cell, Verifier, VerifyPool
from kvgate.probes.agent.safetensors_io import (
    Tensor,
    model_tensors,
    shard,
    shard_name,
    tensor_bytes,
    write_header,
)
from kvgate.probes.agent.spec import RunDir
from kvgate.probes.agent.writers import CellWriter


@dataclass(frozen=True)
class ModelFile:
    """One generated shard: where its tensor data lives and which tensors it holds."""

    path: str
    file_id: int
    data_start: int
    data_bytes: int
    spans: tuple[tuple[int, int, str], ...]  # (begin, end, tensor name) relative to the data section

    def cells(self, cell_bytes: int) -> list[Cell]:
        """The verification cells of the data section."""
        return [
            Cell(
                self.path,
                self.file_id,
                k,
                self.data_start + k * cell_bytes,
                min(cell_bytes, self.data_bytes - k * cell_bytes),
            )
            for k in range(cell_count(self.data_bytes, cell_bytes))
        ]

    def tensors_at(self, begin: int, end: int) -> list[str]:
        """Names of the tensors overlapping data bytes [begin, end)."""
        return [name for b, e, name in self.spans if b < end and e > begin]

    def checksum(self, pattern: Pattern) -> str:
        """The digest of the expected cell digests: what generation recorded for this shard."""
        h = hashlib.sha256()
        for cell in self.cells(pattern.cell_bytes):
            h.update(pattern.expected(cell.file_id, cell.cell, cell.length))
        return h.hexdigest()


def generate(
    run_dir: RunDir, cfg: dict[str, Any], pattern: Pattern, progress: Progress, stop: threading.Event
) -> list[ModelFile]:
    """Write ``cfg['shards']`` safetensors files totalling about ``cfg['model_bytes']``; fsync each."""
    tensors = model_tensors(
        cfg["model_bytes"],
        hidden=cfg["hidden_size"],
        intermediate=cfg["intermediate_size"],
        kv_dim=cfg["kv_dim"],
        dtype=cfg["tensor_dtype"],
    )
    writer = CellWriter(pattern, direct=False, tracker=DirectTracker(False), align=4096)
    groups = shard(tensors, cfg["shards"])
    return [
        write_shard(run_dir.file(shard_name(i, len(groups))), i, group, writer, progress=progress, stop=stop)
        for i, group in enumerate(groups)
    ]


def write_shard(
    path: str,
    index: int,
    group: list[Tensor],
    writer: CellWriter,
    *,
    progress: Progress,
    stop: threading.Event,
) -> ModelFile:
    """One shard: the header, then the data section as pattern cells."""
    metadata = {
        "format": "pt",
        "generator": "kvgate-agent",
        "seed": str(writer.pattern.seed),
        "shard": str(index),
    }
    with open(path, "xb") as f:
        data_start = write_header(f, group, metadata)
    data_bytes = sum(tensor_bytes(t[1], t[2]) for t in group)
    fd = os.open(path, os.O_WRONLY)
    try:
        fd = writer.write_cells(
            fd, path, data_bytes, file_id=index, base=data_start, progress=progress, stop=stop
        )
        os.fsync(fd)
    finally:
        os.close(fd)
    spans, offset = [], 0
    for name, dtype, shape in group:
        size = tensor_bytes(dtype, shape)
        spans.append((offset, offset + size, str(name)))
        offset += size
    return ModelFile(path, index, data_start, data_bytes, tuple(spans))


def describe(files: list[ModelFile], pattern: Pattern) -> dict[str, Any]:
    """The generation manifest of a result."""
    return {
        "files": [
            {
                "path": f.path,
                "data_start_bytes": f.data_start,
                "data_bytes": f.data_bytes,
                "tensors": len(f.spans),
                "data_checksum": f.checksum(pattern),
            }
            for f in files
        ],
        "model_bytes": sum(f.data_bytes for f in files),
        "file_bytes": sum(f.data_start + f.data_bytes for f in files),
        "tensors": sum(len(f.spans) for f in files),
    }


def name_tensors(files: list[ModelFile], verifier: Verifier) -> None:
    """Add the names of the tensors each corrupt cell overlaps to its report."""
    by_path = {f.path: f for f in files}
    for record in verifier.corrupt:
        f = by_path.get(record["file"])
        if f is not None:
            at = record["offset_bytes"] - f.data_start
            record["tensors"] = f.tensors_at(at, at + 1)


class CellStream:
    """Re-cuts a stream of tensor bytes (in data order) into cells and hands each to the verify pool."""

    def __init__(self, model_file: ModelFile, pool: VerifyPool) -> None:
        self.cells = model_file.cells(pool.verifier.pattern.cell_bytes)
        self.pool = pool
        self.pair = BufferPair(lambda: bytearray(pool.verifier.pattern.cell_bytes))
        self.index, self.fill = 0, 0
        self.k, self.buf = self.pair.take()

    def feed(self, data: Any) -> None:
        """Append bytes; every completed cell goes to verification."""
        view = memoryview(data).cast("B")
        while len(view):
            cell = self.cells[self.index]
            take = min(len(view), cell.length - self.fill)
            self.buf[self.fill : self.fill + take] = view[:take]
            self.fill += take
            view = view[take:]
            if self.fill == cell.length:
                self.pair.submit(self.k, self.pool, cell, memoryview(self.buf)[: cell.length])
                self.index, self.fill = self.index + 1, 0
                if self.index < len(self.cells):
                    self.k, self.buf = self.pair.take()

    def complete(self) -> bool:
        """True when every cell of the file was fed (and waits for their verification)."""
        self.pair.drain()
        return self.index == len(self.cells) and self.fill == 0
