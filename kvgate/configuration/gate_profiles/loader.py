"""The one loader of gate profiles: ``workloads/<gate>/<scale>.yaml``, read once per process."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TypeVar

from kvgate.base.config_file import Frozen, load_model, repo_root
from kvgate.base.errors import ConfigError


class Profile(Frozen):
    """A whole gate profile: named as its file."""

    name: str


P = TypeVar("P", bound=Profile)


def profile_path(gate: str, scale: str) -> Path:
    """``workloads/<gate>/<scale>.yaml``."""
    return repo_root() / "workloads" / gate / f"{scale}.yaml"


def load_gate_profile(gate: str, scale: str, model: type[P]) -> P:
    """The profile of ``gate`` for an inventory scale ("smoke" or "full"), read once per process;
    errors name the file and field."""
    profile = _read_once(gate, scale, model)
    assert isinstance(profile, model)  # the cache keeps the model it was asked for
    return profile


@functools.cache
def _read_once(gate: str, scale: str, model: type[Profile]) -> Profile:
    return read_gate_profile(profile_path(gate, scale), model)


def read_gate_profile(path: Path, model: type[P]) -> P:
    """One profile file; its ``name`` must be its file name."""
    profile = load_model(path, model)
    if profile.name != path.stem:
        raise ConfigError(str(path), "name", f"must match the file name {path.stem!r}")
    return profile
