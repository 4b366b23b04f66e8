"""LMCache stages every disk restore in its CPU pool: one too small for the gate's concurrency is refused."""

from __future__ import annotations

import pytest

from kvgate.engines.lmcache import GIB, staging_shortfall
from kvgate.engines.profile import PROFILE_DIR, load_profile

QWEN_32B = 2 * 64 * 8 * 128 * 2  # K and V × 64 layers × 8 KV heads × 128 × bf16: 256 KiB per token


def test_the_seeds_r1_readers_on_one_card_need_more_than_the_stock_pool() -> None:
    profile = load_profile(PROFILE_DIR / "vllm-lmcache-serial-read.yaml")
    why = staging_shortfall(
        profile, state_bytes_per_token=QWEN_32B, prompt_tokens=10_000, concurrency=16, tensor_parallel=1
    )
    # 16 requests × 10k tokens × 256 KiB on one rank: 39.1 GiB in flight
    assert why is not None
    assert "cannot stage 16 restores of 10000 tokens at once (39.1 GiB per rank)" in why
    assert "raise max_local_cpu_size to at least 40" in why


def test_tensor_parallel_ranks_each_stage_their_share() -> None:
    profile = load_profile(PROFILE_DIR / "vllm-lmcache.yaml")
    pool = 8 * GIB  # the profile's max_local_cpu_size
    tokens = pool * 4 // (QWEN_32B * 16)  # exactly what four ranks' pools hold at conc 16
    assert (
        staging_shortfall(
            profile, state_bytes_per_token=QWEN_32B, prompt_tokens=tokens, concurrency=16, tensor_parallel=4
        )
        is None
    )
    assert staging_shortfall(
        profile, state_bytes_per_token=QWEN_32B, prompt_tokens=tokens + 64, concurrency=16, tensor_parallel=4
    )


@pytest.mark.parametrize(
    "name", ["llama-cpp-disk", "sglang-hicache", "vllm-native-tiering", "vllm-recompute"]
)
def test_engines_without_an_lmcache_disk_tier_are_not_judged(name: str) -> None:
    profile = load_profile(PROFILE_DIR / f"{name}.yaml")
    assert (
        staging_shortfall(
            profile, state_bytes_per_token=QWEN_32B, prompt_tokens=10**6, concurrency=64, tensor_parallel=1
        )
        is None
    )
