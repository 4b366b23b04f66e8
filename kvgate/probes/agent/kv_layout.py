"""The on-disk layouts of an emulated KV-cache SSD tier: LMCache chunk files or vLLM block files.

Both hold K and V of every layer for a run of tokens, with
``kv_bytes_per_token = 2 (K,V) × layers × kv_heads × head_dim × dtype_bytes``:

- ``lmcache-chunks`` (KVLayout): LMCache's disk backends store one file per
  chunk of ``chunk_size`` tokens (default 256), ``tokens × kv_bytes_per_token``
  bytes; the last chunk of a prefix may be partial.
- ``vllm-blocks`` (VLLMBlockLayout): vLLM's native file tier stores one
  hash-named file per offloaded chunk of ``blocks_per_file`` KV blocks of
  ``tokens_per_block`` tokens (default 16 × 1), in a 3-level directory fan-out;
  only full chunks are stored.

>>> qwen = KVLayout(kv_bytes_per_token=2 * 64 * 8 * 128 * 2, tokens_per_chunk=256,
...                 prefix_tokens=8192, requests=16)
>>> qwen.kv_bytes_per_token, qwen.chunk_bytes // 2**20, qwen.files_per_request
(262144, 64, 32)
>>> vllm = VLLMBlockLayout(kv_bytes_per_token=262144, tokens_per_block=16, blocks_per_file=1,
...                        prefix_tokens=8192, requests=16)
>>> vllm.file_bytes // 2**20, vllm.files_per_request
(4, 512)
"""

from __future__ import annotations

import hashlib
import json
import struct
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kvgate.probes.agent.content import cell_count
from kvgate.probes.agent.readers import Cell

LMCACHE_CHUNKS = "lmcache-chunks"
VLLM_BLOCKS = "vllm-blocks"
LAYOUTS = (LMCACHE_CHUNKS, VLLM_BLOCKS)
VLLM_DIGEST_CHARS = 12  # vllm/v1/kv_offload/file_mapper.py: _BASE_PATH_HASH_LEN


def kv_bytes_per_token(*, layers: int, kv_heads: int, head_dim: int, dtype_bytes: int) -> int:
    """Bytes of K and V for one token across all layers.

    >>> kv_bytes_per_token(layers=64, kv_heads=8, head_dim=128, dtype_bytes=2)
    262144
    """
    return 2 * layers * kv_heads * head_dim * dtype_bytes


def file_cells(path: str, file_id: int, size_bytes: int, cell_bytes: int) -> list[Cell]:
    """The read/verify units of one file: cells of ``cell_bytes``, the last one maybe shorter."""
    return [
        Cell(path, file_id, k, k * cell_bytes, min(cell_bytes, size_bytes - k * cell_bytes))
        for k in range(cell_count(size_bytes, cell_bytes))
    ]


@dataclass(frozen=True)
class FileLayout(ABC):
    """What both layouts share: ``requests`` prefixes, each stored as a row of files, request-major.

    A layout says how many files a request has, each file's size and name, and its one-request
    total; the enumeration of files and cells, their ids and the grand total live here once.
    """

    kv_bytes_per_token: int
    prefix_tokens: int
    requests: int

    @property
    @abstractmethod
    def files_per_request(self) -> int:
        """Files stored for one request."""

    @property
    @abstractmethod
    def request_bytes(self) -> int:
        """Bytes stored for one request."""

    @abstractmethod
    def file_bytes_at(self, index: int) -> int:
        """Size of file ``index`` of a request."""

    @abstractmethod
    def name(self, request: int, index: int) -> str:
        """Path of file ``index`` of ``request``, relative to the run directory."""

    @property
    def total_bytes(self) -> int:
        """Bytes of all requests."""
        return self.requests * self.request_bytes

    def file_id(self, request: int, index: int) -> int:
        """The id stamped into a file's cells: unique per (request, file)."""
        return request * self.files_per_request + index

    def files(self) -> list[tuple[int, int, int]]:
        """(request, file index, bytes) of every file, request-major."""
        return [
            (r, i, self.file_bytes_at(i)) for r in range(self.requests) for i in range(self.files_per_request)
        ]

    def cells(self, run_dir: str, request: int, cell_bytes: int) -> list[Cell]:
        """The read/verify units of one request, in token order."""
        out = []
        for i in range(self.files_per_request):
            path = f"{run_dir}/{self.name(request, i)}"
            out += file_cells(path, self.file_id(request, i), self.file_bytes_at(i), cell_bytes)
        return out


@dataclass(frozen=True)
class KVLayout(FileLayout):
    """LMCache-style: how C requests' prefixes map to chunk files (the last chunk may be partial)."""

    tokens_per_chunk: int

    @property
    def chunk_bytes(self) -> int:
        """Size of a full chunk file."""
        return self.tokens_per_chunk * self.kv_bytes_per_token

    @property
    def files_per_request(self) -> int:
        """Chunk files per request prefix (rounded up)."""
        return -(-self.prefix_tokens // self.tokens_per_chunk)

    @property
    def request_bytes(self) -> int:
        """KV bytes of one request's prefix."""
        return self.prefix_tokens * self.kv_bytes_per_token

    def file_bytes_at(self, index: int) -> int:
        """Tokens in chunk ``index`` (the last may be partial) × KV bytes per token."""
        return (
            min(self.tokens_per_chunk, self.prefix_tokens - index * self.tokens_per_chunk)
            * self.kv_bytes_per_token
        )

    def name(self, request: int, index: int) -> str:
        """File name of a chunk, relative to the run directory."""
        return f"req{request:05d}-chunk{index:06d}.kvchunk"

    def metadata_files(self) -> dict[str, str]:
        """Small files the tier keeps next to the KV data (none for LMCache)."""
        return {}

    def describe(self) -> dict[str, Any]:
        """The layout fields of a result."""
        return {
            "layout": LMCACHE_CHUNKS,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "tokens_per_chunk": self.tokens_per_chunk,
            "chunk_bytes": self.chunk_bytes,
            "prefix_tokens": self.prefix_tokens,
            "chunks_per_request": self.files_per_request,
            "requests": self.requests,
            "request_bytes": self.request_bytes,
            "total_bytes": self.total_bytes,
        }


@dataclass(frozen=True)
class VLLMBlockLayout(FileLayout):
    """vLLM's native file tier (0.32, ``vllm/v1/kv_offload``): one ``<hash>.bin`` per chunk of blocks.

    As there: a file is named ``<model>_<digest>_r<rank>/<hhh>/<hh>_g<group>/<hash hex>.bin``
    under the tier's root (FileMapper.get_file_name) next to ``<model>_<digest>/config.json``,
    ``digest`` being the first 12 hex of sha256 over the sorted-JSON config fields; a
    file holds one CPU-tier row (every layer; every TP worker's share, so
    ``tokens × kv_bytes_per_token`` when the KV heads split evenly), rounded up to
    the page size; only full chunks are stored. Stand-ins, said plainly: the block
    hash is sha256(seed, request, last block index), not vLLM's chained hash of the
    token ids (same 64 hex chars, same spread over the fan-out), and config.json
    holds vLLM's keys with what an emulation knows (rank 0, tp/pp/pcp/dcp 1, one
    group with no layer names, dtype "emulated").
    """

    tokens_per_block: int
    blocks_per_file: int
    seed: int = 1
    model_name: str = "kvgate-emulated"
    page_bytes: int = 4096

    @property
    def tokens_per_file(self) -> int:
        """Tokens in one file: vLLM's offload chunk (``blocks_per_chunk`` GPU blocks)."""
        return self.tokens_per_block * self.blocks_per_file

    @property
    def file_bytes(self) -> int:
        """Size of every file: the chunk's KV bytes rounded up to the page (SharedOffloadRegion row)."""
        return -(-self.tokens_per_file * self.kv_bytes_per_token // self.page_bytes) * self.page_bytes

    @property
    def files_per_request(self) -> int:
        """Full chunks per prefix (a partial tail is not offloaded: vLLM recomputes it)."""
        return self.prefix_tokens // self.tokens_per_file

    @property
    def request_bytes(self) -> int:
        """Bytes stored for one request."""
        return self.files_per_request * self.file_bytes

    def file_bytes_at(self, index: int) -> int:  # noqa: ARG002 - every file is a full chunk, whatever its index
        """Every file is one full chunk: ``file_bytes``."""
        return self.file_bytes

    def config_fields(self) -> dict[str, Any]:
        """FileMapper.fields for a parallelism-agnostic single-group model (what config.json holds)."""
        return {
            "model_name": self.model_name,
            "tokens_per_hash": self.tokens_per_block,
            "blocks_per_file": self.blocks_per_file,
            "tp_size": 1,
            "pp_size": 1,
            "pcp_size": 1,
            "dcp_size": 1,
            "dtype": "emulated",
            "kv_cache_groups": [{"tokens_per_block": self.tokens_per_block, "layer_names": []}],
            "inference_engine": "vllm",
        }

    @cached_property
    def base_dir(self) -> str:
        """``<model with / as _>_<digest>``: holds config.json; the blocks go under ``<base_dir>_r0``."""
        canonical = json.dumps(self.config_fields(), sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:VLLM_DIGEST_CHARS]
        return f"{self.model_name.replace('/', '_')}_{digest}"

    def block_hash(self, request: int, index: int) -> str:
        """Hex key of file ``index``: vLLM keys a chunk by the hash of its last block."""
        last_block = (index + 1) * self.blocks_per_file - 1
        return hashlib.sha256(struct.pack("<QQQ", self.seed, request, last_block)).hexdigest()

    def name(self, request: int, index: int) -> str:
        """Path of a block file relative to the run directory (the tier's root_dir)."""
        h = self.block_hash(request, index)
        return f"{self.base_dir}_r0/{h[:3]}/{h[3:5]}_g0/{h}.bin"

    def metadata_files(self) -> dict[str, str]:
        """``<base_dir>/config.json`` as FileSystemTierManager writes it (indent 2, sorted keys)."""
        return {f"{self.base_dir}/config.json": json.dumps(self.config_fields(), indent=2, sort_keys=True)}

    def describe(self) -> dict[str, Any]:
        """The layout fields of a result."""
        return {
            "layout": VLLM_BLOCKS,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "tokens_per_block": self.tokens_per_block,
            "blocks_per_file": self.blocks_per_file,
            "tokens_per_file": self.tokens_per_file,
            "file_bytes": self.file_bytes,
            "page_bytes": self.page_bytes,
            "prefix_tokens": self.prefix_tokens,
            "stored_tokens_per_request": self.files_per_request * self.tokens_per_file,
            "files_per_request": self.files_per_request,
            "requests": self.requests,
            "request_bytes": self.request_bytes,
            "total_bytes": self.total_bytes,
            "model_name": self.model_name,
            "block_dir": f"{self.base_dir}_r0",
            "file_name_scheme": "<block_dir>/<hash[:3]>/<hash[3:5]>_g0/<sha256 hex>.bin",
        }


if TYPE_CHECKING:  # the alias is for the type checker only: python 3.8 cannot evaluate X | Y
    Layout = KVLayout | VLLMBlockLayout
