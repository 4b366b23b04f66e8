"""Real safetensors files: an 8-byte little-endian header length, a JSON header, tensor bytes.

The header maps each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}``
(offsets relative to the data section) plus ``"__metadata__"`` (str → str).
We pad the header with spaces (as the format allows) so the data section
starts on a 4096-byte boundary; the tensor bytes are pattern cells over the
data section, so they can be verified by any loader in any read order.

>>> import io
>>> f = io.BytesIO()
>>> start = write_header(f, [("w", "F16", [2, 3])], {"k": "v"})
>>> _ = f.write(bytes(12)); _ = f.seek(0)
>>> start, read_header(f)[1]["w"]["data_offsets"]
(4096, [0, 12])
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import Any, BinaryIO

DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1}
HEADER_ALIGN = 4096
MAX_HEADER_BYTES = 100_000_000  # the safetensors library refuses larger headers

Tensor = Sequence[Any]  # (name, dtype, shape)


def tensor_bytes(dtype: str, shape: Sequence[int]) -> int:
    """Bytes of a tensor of ``dtype`` and ``shape``."""
    n = DTYPE_BYTES[dtype]
    for dim in shape:
        n *= dim
    return n


def encode_header(tensors: Sequence[Tensor], metadata: dict[str, str]) -> bytes:
    """The length prefix and the space-padded JSON header, tensors packed back to back."""
    header: dict[str, Any] = {"__metadata__": dict(metadata)}
    offset = 0
    for name, dtype, shape in tensors:
        size = tensor_bytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    body = json.dumps(header, separators=(",", ":")).encode()
    padded = -(-(8 + len(body)) // HEADER_ALIGN) * HEADER_ALIGN - 8
    return struct.pack("<Q", padded) + body + b" " * (padded - len(body))


def write_header(f: BinaryIO, tensors: Sequence[Tensor], metadata: dict[str, str]) -> int:
    """Write the header; returns the file offset where the data section starts."""
    raw = encode_header(tensors, metadata)
    f.write(raw)
    return len(raw)


def parse_header(raw_len: bytes, read: Any) -> tuple[int, dict[str, Any]]:
    """(data start, header dict) from the 8 length bytes and a ``read(n)`` callable; validates."""
    if len(raw_len) != 8:
        raise ValueError("not a safetensors file: shorter than 8 bytes")
    (n,) = struct.unpack("<Q", raw_len)
    if n > MAX_HEADER_BYTES:
        raise ValueError(f"safetensors header of {n} bytes exceeds {MAX_HEADER_BYTES}")
    text = read(n)
    if len(text) != n or not text.startswith(b"{"):
        raise ValueError("safetensors header is truncated or does not start with '{'")
    header = json.loads(text)
    check_offsets(header)
    return 8 + n, header


def read_header(f: BinaryIO) -> tuple[int, dict[str, Any]]:
    """Read and validate the header of an open safetensors file."""
    return parse_header(f.read(8), f.read)


def check_offsets(header: dict[str, Any]) -> int:
    """Tensors must tile the data section without holes or overlaps; returns its size."""
    spans = sorted((v["data_offsets"], k, v) for k, v in header.items() if k != "__metadata__")
    end = 0
    for (begin, stop), name, info in spans:
        if begin != end or stop - begin != tensor_bytes(info["dtype"], info["shape"]):
            raise ValueError(
                f"tensor {name}: data_offsets {[begin, stop]} do not follow {end} or fit its shape"
            )
        end = stop
    return end


def tensors_by_offset(header: dict[str, Any]) -> list[tuple[int, int, str]]:
    """(begin, end, name) of every tensor, in data order."""
    return sorted(
        (v["data_offsets"][0], v["data_offsets"][1], k) for k, v in header.items() if k != "__metadata__"
    )


def model_tensors(
    model_bytes: int, *, hidden: int, intermediate: int, kv_dim: int, dtype: str
) -> list[Tensor]:
    """A decoder-shaped tensor list totalling about ``model_bytes`` (layers, then embeddings for the rest)."""
    layer = [
        ("self_attn.q_proj.weight", [hidden, hidden]),
        ("self_attn.k_proj.weight", [kv_dim, hidden]),
        ("self_attn.v_proj.weight", [kv_dim, hidden]),
        ("self_attn.o_proj.weight", [hidden, hidden]),
        ("mlp.gate_proj.weight", [intermediate, hidden]),
        ("mlp.up_proj.weight", [intermediate, hidden]),
        ("mlp.down_proj.weight", [hidden, intermediate]),
        ("input_layernorm.weight", [hidden]),
        ("post_attention_layernorm.weight", [hidden]),
    ]
    layer_bytes = sum(tensor_bytes(dtype, shape) for _, shape in layer)
    layers = max(1, int(model_bytes * 0.95) // layer_bytes)
    out: list[Tensor] = [
        (f"model.layers.{i}.{name}", dtype, shape) for i in range(layers) for name, shape in layer
    ]
    out.append(("model.norm.weight", dtype, [hidden]))
    rest = model_bytes - sum(tensor_bytes(t[1], t[2]) for t in out)
    rows = max(1, rest // 2 // tensor_bytes(dtype, [hidden]))
    out.insert(0, ("model.embed_tokens.weight", dtype, [rows, hidden]))
    out.append(("lm_head.weight", dtype, [rows, hidden]))
    return out


def shard(tensors: Sequence[Tensor], shards: int) -> list[list[Tensor]]:
    """Pack tensors in order into ``shards`` files of about equal size (HF max_shard_size style)."""
    if shards > len(tensors):
        raise ValueError(f"{shards} shards but only {len(tensors)} tensors")
    total = sum(tensor_bytes(t[1], t[2]) for t in tensors) or 1
    out: list[list[Tensor]] = [[] for _ in range(shards)]
    done, cur = 0, 0
    for i, t in enumerate(tensors):
        past_share = done * shards // total > cur
        needed_later = shards - cur - 1 >= len(tensors) - i  # every later shard needs a tensor
        if out[cur] and (past_share or needed_later):
            cur += 1
        out[cur].append(t)
        done += tensor_bytes(t[1], t[2])
    return out


def shard_name(index: int, shards: int) -> str:
    """Hugging Face shard naming: model-00001-of-00008.safetensors."""
    return f"model-{index + 1:05d}-of-{shards:05d}.safetensors"
