"""LMCache's CPU pool stages every disk restore: sized too small, restores go silently partial.

LMCache reads a disk chunk into a buffer from its local CPU backend's pool
(``max_local_cpu_size``, GiB per TP rank, default 5.0; the disk tier requires that backend,
LMCache PR #2526, and shares its pool with the hot CPU cache, issue #559). When the pool
is full a disk load fails to allocate ("Memory allocation failed during sync disk load",
issue #969) and the request restores fewer tokens than the lookup promised (PR #4348), or
waits for other requests to free theirs (PR #1429). Either way the measured restore is
not the storage's. So before G3 drives a load, the pool of a profile with an LMCache disk
tier must hold the state of every request in flight at the highest concurrency, per rank.

>>> need_bytes(state_bytes_per_token=131072, prompt_tokens=10_000, concurrency=16, tensor_parallel=4)
5242880000
"""

from __future__ import annotations

import math
from typing import Any

from kvgate.base.units import GiB
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.engine_templates import DataFile

DEFAULT_POOL_GIB = 5.0  # lmcache/v1/config.py: max_local_cpu_size


def lmcache_config(profile: EngineProfile) -> dict[str, Any] | None:
    """The LMCache config the profile writes (files: <name>: {format, data}), if it has a disk tier."""
    for spec in profile.files.values():
        if isinstance(spec, DataFile) and "local_disk" in spec.data and "chunk_size" in spec.data:
            return spec.data
    return None


def need_bytes(
    *, state_bytes_per_token: int, prompt_tokens: int, concurrency: int, tensor_parallel: int
) -> int:
    """Per TP rank: the KV state of ``concurrency`` prompts in flight at once (each rank holds 1/TP)."""
    return math.ceil(state_bytes_per_token * prompt_tokens * concurrency / max(tensor_parallel, 1))


def staging_shortfall(
    profile: EngineProfile,
    *,
    state_bytes_per_token: int,
    prompt_tokens: int,
    concurrency: int,
    tensor_parallel: int,
) -> str | None:
    """Why the profile's LMCache pool cannot stage the gate's restores; None if it can (or it has none)."""
    config = lmcache_config(profile)
    if config is None or not state_bytes_per_token:
        return None
    pool_gib = float(config.get("max_local_cpu_size", DEFAULT_POOL_GIB))
    need = need_bytes(
        state_bytes_per_token=state_bytes_per_token,
        prompt_tokens=prompt_tokens,
        concurrency=concurrency,
        tensor_parallel=tensor_parallel,
    )
    if pool_gib * GiB >= need:
        return None
    return (
        f"{profile.name}: LMCache's CPU pool (max_local_cpu_size {pool_gib:g} GiB per TP rank) cannot "
        f"stage {concurrency} restores of {prompt_tokens} tokens at once ({need / GiB:.1f} GiB per rank): "
        "disk restores would load fewer tokens than they hit (LMCache #969, PR #4348); raise "
        f"max_local_cpu_size to at least {math.ceil(need / GiB)} or lower the gate's concurrency"
    )
