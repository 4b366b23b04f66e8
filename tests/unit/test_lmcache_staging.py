"""LMCache stages every disk restore in its CPU pool: one too small for the gate's concurrency is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvgate.base.units import GiB
from kvgate.configuration.engine_profile import PROFILE_DIR, engine_profile, load_profile
from kvgate.configuration.gate_profiles.g3 import load_g3_profile
from kvgate.configuration.inventory import load
from kvgate.orchestration.g3.context import Setup
from kvgate.orchestration.g3.measure import read_phase
from kvgate.orchestration.g3.plan import capacity_profiles, read_profiles
from kvgate.orchestration.g3.staging import staging_reason
from kvgate.probes.engines.lmcache import staging_shortfall
from kvgate.probes.scratch import ScratchDir

REPO = Path(__file__).resolve().parents[2]

QWEN_32B = 2 * 64 * 8 * 128 * 2  # K and V × 64 layers × 8 KV heads × 128 × bf16: 256 KiB per token


def test_r1s_readers_on_one_card_stage_its_restores_and_no_more() -> None:
    profile = load_profile(PROFILE_DIR / "vllm-lmcache-serial-read.yaml")  # a 48 GiB pool
    r1 = {"state_bytes_per_token": QWEN_32B, "concurrency": 16, "tensor_parallel": 1}
    assert staging_shortfall(profile, prompt_tokens=10_000, **r1) is None  # 39.1 GiB in flight
    why = staging_shortfall(profile, prompt_tokens=13_000, **r1)
    assert why is not None
    assert "cannot stage 16 restores of 13000 tokens at once (50.8 GiB per rank)" in why
    assert "raise max_local_cpu_size to at least 51" in why


def test_tensor_parallel_ranks_each_stage_their_share() -> None:
    profile = load_profile(PROFILE_DIR / "vllm-lmcache.yaml")
    pool = 16 * GiB  # the profile's max_local_cpu_size
    tokens = pool * 4 // (QWEN_32B * 16)  # exactly what four ranks' pools hold at conc 16
    tp4 = {"state_bytes_per_token": QWEN_32B, "concurrency": 16, "tensor_parallel": 4}
    assert staging_shortfall(profile, prompt_tokens=tokens, **tp4) is None
    assert staging_shortfall(profile, prompt_tokens=tokens + 64, **tp4) is not None


@pytest.mark.parametrize(
    "name", ["llama-cpp-disk", "sglang-hicache", "vllm-native-tiering", "vllm-recompute"]
)
def test_engines_without_an_lmcache_disk_tier_are_not_judged(name: str) -> None:
    profile = engine_profile(name)
    assert (
        staging_shortfall(
            profile, state_bytes_per_token=QWEN_32B, prompt_tokens=10**6, concurrency=64, tensor_parallel=1
        )
        is None
    )


def lab_setup(name: str) -> Setup:
    """A deployment of inventory/example-lab.yaml resolved as G3 resolves it, without a host."""
    inv = load(REPO / "inventory" / "example-lab.yaml").inventory
    dep = inv.engines[name]
    tier = engine_profile(dep.tier_profile)
    assert dep.state_bytes_per_token is not None
    at = dep.capacity
    return Setup(
        deployment=name,
        tier=tier,
        recompute=engine_profile(dep.recompute_profile),
        python="python3",
        model=str(dep.model),
        work=ScratchDir("h", "/w", "/w", "/"),
        port=dep.port,
        state_bytes_per_token=dep.state_bytes_per_token,
        sudo=True,
        salt="s",
        envs=dep.instance_envs,
        engine_args=dep.engine_args,
        readers=read_profiles(dep, profiles=engine_profile),
        read=read_phase(dep),
        capacity=capacity_profiles(tier, profiles=engine_profile),
        capacity_args=at.engine_args if at else dep.engine_args,
    )


def test_the_example_labs_lmcache_engines_can_stage_the_full_gates_restores() -> None:
    full = load_g3_profile("full")
    inv = load(REPO / "inventory" / "example-lab.yaml").inventory
    for name in inv.engines:
        setup = lab_setup(name)
        assert staging_reason(setup, full) is None, name


def test_g3_stops_a_deployment_whose_pool_is_too_small_before_any_arm() -> None:
    setup = lab_setup("r2r3-480b")
    heavy = load_g3_profile("full").model_copy(update={"concurrency": (512,)})
    why = staging_reason(setup, heavy)
    assert why is not None
    assert "cannot stage 512 restores" in why
