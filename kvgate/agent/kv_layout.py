"""The on-disk layout of an emulated KV-cache SSD tier: chunk files of N tokens per request.

LMCache's disk backends store one file per chunk of ``chunk_size`` tokens
(default 256); a chunk holds K and V of every layer for those tokens, so its
size is ``tokens × kv_bytes_per_token`` with
``kv_bytes_per_token = 2 (K,V) × layers × kv_heads × head_dim × dtype_bytes``.

>>> qwen = KVLayout(kv_bytes_per_token=2 * 64 * 8 * 128 * 2, tokens_per_chunk=256,
...                 prefix_tokens=8192, requests=16)
>>> qwen.kv_bytes_per_token, qwen.chunk_bytes // 2**20, qwen.chunks_per_request
(262144, 64, 32)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kvgate.agent.content import cell_count
from kvgate.agent.readers import Cell


def kv_bytes_per_token(*, layers: int, kv_heads: int, head_dim: int, dtype_bytes: int) -> int:
    """Bytes of K and V for one token across all layers.

    >>> kv_bytes_per_token(layers=64, kv_heads=8, head_dim=128, dtype_bytes=2)
    262144
    """
    return 2 * layers * kv_heads * head_dim * dtype_bytes


@dataclass(frozen=True)
class KVLayout:
    """How C requests' prefixes map to chunk files (the last chunk may be partial)."""

    kv_bytes_per_token: int
    tokens_per_chunk: int
    prefix_tokens: int
    requests: int

    @property
    def chunk_bytes(self) -> int:
        """Size of a full chunk file."""
        return self.tokens_per_chunk * self.kv_bytes_per_token

    @property
    def chunks_per_request(self) -> int:
        """Chunk files per request prefix (rounded up)."""
        return -(-self.prefix_tokens // self.tokens_per_chunk)

    @property
    def request_bytes(self) -> int:
        """KV bytes of one request's prefix."""
        return self.prefix_tokens * self.kv_bytes_per_token

    @property
    def total_bytes(self) -> int:
        """KV bytes of all requests."""
        return self.requests * self.request_bytes

    def chunk_tokens(self, chunk: int) -> int:
        """Tokens in chunk ``chunk`` of a request."""
        return min(self.tokens_per_chunk, self.prefix_tokens - chunk * self.tokens_per_chunk)

    def file_id(self, request: int, chunk: int) -> int:
        """The id stamped into a chunk's cells: unique per (request, chunk)."""
        return request * self.chunks_per_request + chunk

    @staticmethod
    def name(request: int, chunk: int) -> str:
        """File name of a chunk, relative to the run directory."""
        return f"req{request:05d}-chunk{chunk:06d}.kvchunk"

    def files(self) -> list[tuple[int, int, int]]:
        """(request, chunk, bytes) of every chunk file, request-major."""
        return [
            (r, c, self.chunk_tokens(c) * self.kv_bytes_per_token)
            for r in range(self.requests)
            for c in range(self.chunks_per_request)
        ]

    def cells(self, run_dir: str, request: int, cell_bytes: int) -> list[Cell]:
        """The read/verify units of one request, in chunk order."""
        out = []
        for c in range(self.chunks_per_request):
            size = self.chunk_tokens(c) * self.kv_bytes_per_token
            path = f"{run_dir}/{self.name(request, c)}"
            for k in range(cell_count(size, cell_bytes)):
                length = min(cell_bytes, size - k * cell_bytes)
                out.append(Cell(path, self.file_id(request, c), k, k * cell_bytes, length))
        return out

    def describe(self) -> dict[str, Any]:
        """The layout fields of a result."""
        return {
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "tokens_per_chunk": self.tokens_per_chunk,
            "chunk_bytes": self.chunk_bytes,
            "prefix_tokens": self.prefix_tokens,
            "chunks_per_request": self.chunks_per_request,
            "requests": self.requests,
            "request_bytes": self.request_bytes,
            "total_bytes": self.total_bytes,
        }
