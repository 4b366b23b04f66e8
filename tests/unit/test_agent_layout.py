"""KV chunk layout math: the numbers a site engineer checks against LMCache's files."""

from kvgate.probes.agent.kv_layout import KVLayout, kv_bytes_per_token

KIB, MIB = 1 << 10, 1 << 20


def test_qwen25_32b_is_256_kib_per_token_and_64_mib_per_256_token_chunk() -> None:
    per_token = kv_bytes_per_token(layers=64, kv_heads=8, head_dim=128, dtype_bytes=2)
    assert per_token == 256 * KIB
    layout = KVLayout(kv_bytes_per_token=per_token, tokens_per_chunk=256, prefix_tokens=8192, requests=16)
    assert layout.chunk_bytes == 64 * MIB
    assert layout.files_per_request == 32
    assert layout.request_bytes == 2 * 1024 * MIB
    assert layout.total_bytes == 32 * 1024 * MIB


def test_llama_70b_is_320_kib_per_token() -> None:
    assert kv_bytes_per_token(layers=80, kv_heads=8, head_dim=128, dtype_bytes=2) == 320 * KIB


def test_a_partial_last_chunk_holds_the_remaining_tokens() -> None:
    layout = KVLayout(kv_bytes_per_token=16 * KIB, tokens_per_chunk=256, prefix_tokens=1000, requests=2)
    sizes = [size for r, _c, size in layout.files() if r == 0]
    assert len(sizes) == 4
    assert sizes[-1] == (1000 - 3 * 256) * 16 * KIB
    assert sum(sizes) == layout.request_bytes


def test_cells_cover_every_chunk_exactly_and_ids_are_unique() -> None:
    layout = KVLayout(kv_bytes_per_token=16 * KIB, tokens_per_chunk=256, prefix_tokens=1000, requests=3)
    cell_bytes = 3 * MIB  # not a divisor of the 4 MiB chunk: tails must be exact
    all_cells = [c for r in range(3) for c in layout.cells("/run", r, cell_bytes)]
    assert sum(c.length for c in all_cells) == layout.total_bytes
    assert len({(c.path, c.offset) for c in all_cells}) == len(all_cells)
    assert len({layout.file_id(r, c) for r, c, _ in layout.files()}) == len(layout.files())
    first = layout.cells("/run", 0, cell_bytes)[:2]
    assert [(c.offset, c.length) for c in first] == [(0, 3 * MIB), (3 * MIB, 1 * MIB)]
