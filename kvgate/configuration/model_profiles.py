"""Model profiles for the storage-level workloads (``workloads/models/*.yaml``), validated once.

A profile names a model's KV geometry (kv-restore), its weight size and shard
count (model-load) and a checkpoint size and rank count, with where each number
comes from. ``agent_spec`` turns a profile into the JSON spec the agent runs:

>>> p = load_profile(PROFILES_DIR / "qwen2.5-32b.yaml")
>>> p.kv.kv_bytes_per_token
262144
>>> agent_spec(p, "kv-restore", target_dir="/scratch")["tokens_per_chunk"]
256
>>> agent_spec(p, "kv-restore", target_dir="/scratch")["layout"]
'lmcache-chunks'
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from kvgate.base.config_file import Frozen, Shipped, load_model, repo_root
from kvgate.base.errors import ConfigError
from kvgate.base.units import MiB
from kvgate.configuration.bounds import Bytes, Count, Dim, Tokens

PROFILES_DIR = repo_root() / "workloads" / "models"
WORKLOADS = ("kv-restore", "model-load", "checkpoint")
# scale → model profile per workload (G2's storage workloads)
SCALE_MODELS = {
    "smoke": {"kv-restore": "smoke", "model-load": "smoke", "checkpoint": "smoke"},
    "full": {
        "kv-restore": "qwen2.5-32b",
        "model-load": "deepseek-r1-distill-qwen-32b",
        "checkpoint": "qwen2.5-32b",
    },
}


class KVGeometry(Frozen):
    """Per-token KV size: 2 (K and V) × layers × kv_heads × head_dim × dtype_bytes."""

    layers: Dim = Field(gt=0)
    kv_heads: Dim = Field(gt=0)
    head_dim: Dim = Field(gt=0)
    dtype_bytes: int = Field(gt=0, le=8)
    source: str = ""

    @property
    def kv_bytes_per_token(self) -> int:
        """Bytes of K and V for one token across all layers."""
        return 2 * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes


class KVRestoreProfile(Frozen):
    """C requests × prefix tokens in KV files of the chosen ``layout``, restored with P readers per request.

    ``lmcache-chunks`` (default): one file per ``tokens_per_chunk`` tokens (LMCache's chunk_size).
    ``vllm-blocks``: vLLM's native file tier, one hash-named file per ``blocks_per_file``
    (kv_connector_extra_config ``blocks_per_chunk``) blocks of ``tokens_per_block`` (``--block-size``).
    """

    layout: Literal["lmcache-chunks", "vllm-blocks"] = "lmcache-chunks"
    tokens_per_chunk: Tokens = Field(256, gt=0)
    tokens_per_block: Tokens = Field(16, gt=0)
    blocks_per_file: Count = Field(1, gt=0)
    prefix_tokens: Tokens = Field(gt=0)
    requests: Count = Field(gt=0)
    readers_per_request: tuple[Annotated[Count, Field(ge=1)], ...] = Field((1, 8), min_length=1)
    io_bytes: int = Field(8 * MiB, ge=4096, le=1 << 30, multiple_of=4096)
    source: str = ""

    @model_validator(mode="after")
    def _fields_fit_the_layout(self) -> KVRestoreProfile:
        """A field of the other layout is refused (it would be ignored), as is a too short prefix."""
        misplaced = sorted(self.model_fields_set & self.other_layout_fields())
        if misplaced:
            raise ValueError(f"{', '.join(misplaced)} does not apply to layout {self.layout}")
        tokens_per_file = self.tokens_per_block * self.blocks_per_file
        if self.layout == "vllm-blocks" and self.prefix_tokens < tokens_per_file:
            raise ValueError(
                f"prefix_tokens {self.prefix_tokens} is shorter than one vllm-blocks file "
                f"({self.tokens_per_block} x {self.blocks_per_file} tokens): vLLM stores only full blocks"
            )
        return self

    def other_layout_fields(self) -> set[str]:
        """The fields that belong to the layout not chosen."""
        return (
            {"tokens_per_block", "blocks_per_file"}
            if self.layout == "lmcache-chunks"
            else {"tokens_per_chunk"}
        )


class ModelLoadProfile(Frozen):
    """A safetensors model of ``model_bytes`` in ``shards`` files, decoder-shaped tensors."""

    model_bytes: Bytes = Field(gt=MiB)
    shards: Count = Field(gt=0)
    hidden_size: Dim = Field(gt=0)
    intermediate_size: Dim = Field(gt=0)
    kv_dim: Dim = Field(gt=0)
    tensor_dtype: Literal["F16", "BF16", "F32", "U8"] = "F16"
    threads: Count = Field(8, gt=0)
    io_bytes: int = Field(8 * MiB, ge=4096, le=1 << 30, multiple_of=4096)
    approximate: bool = False
    source: str = ""


class CheckpointProfile(Frozen):
    """One save by ``ranks`` processes: one snapshot of ``snapshot_bytes`` split over them, or one each."""

    snapshot_bytes: Bytes = Field(gt=0)
    ranks: Count = Field(gt=0)
    snapshot_per_rank: bool = False  # True: every rank writes a whole snapshot (ranks × snapshot_bytes)
    readback_threads: Count = Field(8, gt=0)
    io_bytes: int = Field(8 * MiB, ge=4096, le=1 << 30, multiple_of=4096)
    source: str = ""


class ModelProfile(Frozen):
    """One file of ``workloads/models``: a model and the workloads it parameterises."""

    name: str = Field(min_length=1)
    description: str = ""
    scale: Literal["real", "smoke"]
    kv: KVGeometry | None = None
    kv_restore: KVRestoreProfile | None = None
    model_load: ModelLoadProfile | None = None
    checkpoint: CheckpointProfile | None = None


def load_profile(path: Path) -> ModelProfile:
    """Validate one profile; errors name the file and the field."""
    profile = load_model(path, ModelProfile)
    if profile.kv_restore is not None and profile.kv is None:
        raise ConfigError(str(path), "kv", "required when kv_restore is given (the KV bytes per token)")
    return profile


model_profile = Shipped(PROFILES_DIR, load_profile)  # ``model_profile(name)``: read once


def scale_models(scale: str) -> dict[str, str]:
    """The model profile of each storage workload at an inventory scale."""
    return SCALE_MODELS[scale]


def load_profiles(directory: Path = PROFILES_DIR) -> dict[str, ModelProfile]:
    """Every ``*.yaml`` profile of a directory, by name (names must be unique)."""
    out: dict[str, ModelProfile] = {}
    for path in sorted(directory.glob("*.yaml")):
        profile = load_profile(path)
        if profile.name in out:
            raise ConfigError(str(path), "name", f"{profile.name!r} is already used by another profile")
        out[profile.name] = profile
    return out


def agent_spec(profile: ModelProfile, workload: str, *, target_dir: str, **overrides: Any) -> dict[str, Any]:
    """The agent's JSON spec for ``workload`` from a profile; ``overrides`` win (e.g. seed, direct)."""
    base: dict[str, Any] = {
        "target_dir": target_dir,
        "labels": {"profile": profile.name, "scale": profile.scale},
    }
    if workload == "kv-restore" and profile.kv_restore is not None and profile.kv is not None:
        kv = profile.kv_restore
        base.update(
            kv.model_dump(exclude={"source"} | kv.other_layout_fields()),
            kv_bytes_per_token=profile.kv.kv_bytes_per_token,
        )
        base["readers_per_request"] = list(kv.readers_per_request)
        if kv.layout == "vllm-blocks":
            base["model_name"] = profile.name  # names the tier's directory, as the served model does
    elif workload == "model-load" and profile.model_load is not None:
        base.update(profile.model_load.model_dump(exclude={"source", "approximate"}))
    elif workload == "checkpoint" and profile.checkpoint is not None:
        ck = profile.checkpoint
        base.update(ck.model_dump(exclude={"source", "snapshot_per_rank"}))
        base["snapshot_bytes"] = ck.snapshot_bytes * (ck.ranks if ck.snapshot_per_rank else 1)  # the save
    else:
        raise ConfigError(profile.name, workload.replace("-", "_"), f"profile has no {workload} section")
    return {**base, **overrides}
