"""The safetensors writer/reader: real format, offsets that tile the data, shards like HF's."""

import io
import json
import struct

import pytest

from kvgate.probes.agent.safetensors_io import (
    check_offsets,
    encode_header,
    model_tensors,
    read_header,
    shard,
    shard_name,
    tensor_bytes,
)


def test_header_roundtrip_is_the_safetensors_format() -> None:
    tensors = [("a", "F16", [2, 3]), ("b", "F32", [4])]
    raw = encode_header(tensors, {"format": "pt"})
    (n,) = struct.unpack("<Q", raw[:8])
    assert len(raw) == 8 + n
    assert len(raw) % 4096 == 0
    header = json.loads(raw[8:])  # trailing spaces are valid JSON padding, as the library writes them
    assert header["__metadata__"] == {"format": "pt"}
    assert header["a"] == {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, 12]}
    assert header["b"]["data_offsets"] == [12, 28]
    start, parsed = read_header(io.BytesIO(raw + bytes(28)))
    assert start == len(raw)
    assert parsed == header


def test_reader_refuses_holes_and_wrong_sizes() -> None:
    good = {"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}}
    assert check_offsets(good) == 4
    hole = {"a": {"dtype": "F16", "shape": [2], "data_offsets": [4, 8]}}
    with pytest.raises(ValueError, match="do not follow 0"):
        check_offsets(hole)
    with pytest.raises(ValueError, match="truncated"):
        read_header(io.BytesIO(struct.pack("<Q", 100) + b"{}"))


def test_model_tensors_total_the_requested_size_and_shards_are_balanced() -> None:
    size = 256 << 20
    tensors = model_tensors(size, hidden=512, intermediate=1536, kv_dim=128, dtype="F16")
    total = sum(tensor_bytes(t[1], t[2]) for t in tensors)
    assert abs(total - size) < 2 * 512 * 2  # within two embedding rows
    groups = shard(tensors, 4)
    sizes = [sum(tensor_bytes(t[1], t[2]) for t in g) for g in groups]
    assert all(sizes)
    assert sum(sizes) == total
    assert max(sizes) < 1.2 * total / 4
    assert [t for g in groups for t in g] == tensors  # order kept, nothing lost


def test_every_shard_gets_a_tensor_even_with_few_tensors() -> None:
    tensors = [(f"t{i}", "U8", [10]) for i in range(5)]
    assert [len(g) for g in shard(tensors, 5)] == [1, 1, 1, 1, 1]
    with pytest.raises(ValueError, match="6 shards"):
        shard(tensors, 6)


def test_shard_names_follow_hugging_face() -> None:
    assert shard_name(0, 8) == "model-00001-of-00008.safetensors"
