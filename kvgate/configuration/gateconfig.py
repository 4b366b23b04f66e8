"""The gate configuration: the inventory and every file it names, loaded and cross-validated once.

Each file keeps its own schema and loader (inventory/, engines/profile.py,
model_profiles.py, fio/matrix.py, gate_profiles/, references.py); this module
reads the set an inventory selects and checks what one file says of another (an
engine profile an inventory names exists, a reference a gate profile binds exists,
a fio job G2 judges is in the matrix), so a typo stops the run before anything runs:
a ConfigError naming the file, the field and what was expected (exit code 4).

>>> cfg = load_config("inventory/local.yaml")
>>> cfg.fio.name, cfg.engines["llama-cpp-disk"].kind
('smoke', 'llama-cpp')
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvgate.base.errors import ConfigError
from kvgate.configuration.engine_profile import EngineProfile, engine_profile
from kvgate.configuration.fio_matrix import MatrixProfile, fio_matrix, fio_matrix_path
from kvgate.configuration.gate_profiles import (
    G3Profile,
    G4Profile,
    load_g3_profile,
    load_g4_profile,
    profile_path,
)
from kvgate.configuration.inventory import Inventory, LoadedInventory, load
from kvgate.configuration.model_profiles import ModelProfile, model_profile, scale_models
from kvgate.configuration.reference_schema import References
from kvgate.configuration.references import load_references

# the fio jobs G2's criteria read, with the rw each must do (orchestration.g2.plan; the report names them)
G2_FIO_JOBS = {"seqread-1m": "read", "seqwrite-1m": "write", "randread-4k": "randread"}


@dataclass(frozen=True)
class GateConfig:
    """Everything a gate run is configured by, validated together."""

    inventory: LoadedInventory
    references: References
    engines: Mapping[str, EngineProfile]  # the engine profiles the inventory names, by name
    models: Mapping[str, ModelProfile]  # the model profiles its scale and the G3 profile name
    fio: MatrixProfile  # G2's fio matrix for its scale
    g3: G3Profile
    g4: G4Profile

    def engine(self, name: str) -> EngineProfile:
        """The engine profile ``name`` as this configuration loaded it (every name it holds was checked)."""
        return self.engines[name]

    def workload_models(self) -> dict[str, ModelProfile]:
        """G2's storage workloads at the inventory's scale, each with the model profile it runs."""
        table = scale_models(self.inventory.inventory.scale)
        return {workload: self.models[name] for workload, name in table.items()}

    def files(self) -> dict[str, Path]:
        """Every configuration file the run reads, by what it is."""
        scale = self.inventory.inventory.scale
        return {
            "inventory": self.inventory.path,
            "references": Path(self.references.path),
            "fio": fio_matrix_path(scale),
            "g3": profile_path("g3", scale),
            "g4": profile_path("g4", self.g4.name),
            **{f"engines/{n}": engine_profile.path(n) for n in sorted(self.engines)},
            **{f"models/{n}": model_profile.path(n) for n in sorted(self.models)},
        }

    def recorded(self) -> dict[str, Any]:
        """The run record's configuration part: each file by path and sha256 (the inventory's: of
        the bytes that were validated)."""
        files = {k: {"path": str(p), "sha256": _sha256(p)} for k, p in self.files().items()}
        files["inventory"]["sha256"] = self.inventory.sha256
        return {"references": files["references"], "files": files}


def load_config(inventory: str | Path) -> GateConfig:
    """The inventory at ``inventory`` and every file it selects, validated and cross-validated."""
    return configure(load(inventory))


def in_memory(inventory: Inventory) -> GateConfig:
    """An inventory built in code (tests) with every shipped file it selects; it has no file of its own,
    so it cannot be ``recorded()`` (a gate run loads its inventory from a file: load_config)."""
    return configure(LoadedInventory(Path("<in memory>"), "", inventory))


def configure(loaded: LoadedInventory) -> GateConfig:
    """An inventory already loaded (or built in memory, as tests do) with every file it selects."""
    inv, path = loaded.inventory, str(loaded.path)
    engines = {name: _engine(path, field, name) for field, name in engine_names(inv)}
    for name, profile in list(engines.items()):
        for field, other in _arm_names(profile):
            engines[other] = _engine(str(engine_profile.path(name)), field, other)
    g3 = load_g3_profile(inv.scale)
    config = GateConfig(
        inventory=loaded,
        references=load_references(),
        engines=engines,
        models=model_profiles(inv.scale, g3),
        fio=g2_fio_matrix(inv.scale),
        g3=g3,
        g4=_g4(path, inv.g4_profile or inv.scale),
    )
    check_bindings(config.g3, config.references, profile_path("g3", inv.scale))
    return config


def engine_names(inv: Inventory) -> Iterator[tuple[str, str]]:
    """``(field path, engine profile name)`` for every engine profile the inventory names."""
    for name, dep in inv.engines.items():
        yield f"engines.{name}.tier_profile", dep.tier_profile
        yield f"engines.{name}.recompute_profile", dep.recompute_profile
        if dep.cold_read is not None:
            yield f"engines.{name}.cold_read.serial", dep.cold_read.serial
            yield f"engines.{name}.cold_read.parallel", dep.cold_read.parallel
    for name, ml in inv.model_loads.items():
        yield f"model_loads.{name}.profile", ml.profile


def _arm_names(profile: EngineProfile) -> Iterator[tuple[str, str]]:
    """The other engine profiles an engine profile names (its capacity arms)."""
    if profile.capacity_arms is not None:
        yield "capacity_arms.dram_only", profile.capacity_arms.dram_only
        if profile.capacity_arms.ssd_tier is not None:
            yield "capacity_arms.ssd_tier", profile.capacity_arms.ssd_tier


def _g4(path: str, name: str) -> G4Profile:
    """G4's profile: the inventory's ``g4_profile``, else its scale's."""
    _exists(profile_path("g4", name), "G4", path, "g4_profile")
    return load_g4_profile(name)


def _engine(path: str, field: str, name: str) -> EngineProfile:
    """The engine profile ``name`` that ``field`` of ``path`` names; a missing one is its ConfigError."""
    _exists(engine_profile.path(name), "engine", path, field)
    return engine_profile(name)


def model_profiles(scale: str, g3: G3Profile) -> dict[str, ModelProfile]:
    """The model profiles G2's workloads at this scale and G3's storage verdicts read, by name."""
    named = dict.fromkeys(scale_models(scale).values(), ("", ""))  # kvgate's own table
    if g3.storage is not None:
        where = str(profile_path("g3", scale))
        named |= {g3.storage.model_load: (where, "storage.model_load")}
        named |= {g3.storage.checkpoint: (where, "storage.checkpoint")}
    for name, (path, field) in named.items():
        if path:
            _exists(model_profile.path(name), "model", path, field)
    return {name: model_profile(name) for name in sorted(named)}


def _exists(profile: Path, kind: str, path: str, field: str) -> None:
    """``field`` of ``path`` names a profile that must exist: the error lists the ones there are."""
    if not profile.is_file():
        known = ", ".join(sorted(p.stem for p in profile.parent.glob("*.yaml")))
        raise ConfigError(
            path, field, f"no {kind} profile {profile.stem!r} in {profile.parent} (have: {known})"
        )


def g2_fio_matrix(scale: str) -> MatrixProfile:
    """G2's fio matrix for ``scale``, refused unless it holds the jobs G2 judges."""
    matrix = fio_matrix(scale)
    check_g2_jobs(matrix, fio_matrix_path(scale))
    return matrix


def check_g2_jobs(matrix: MatrixProfile, path: Path) -> None:
    """Every job G2 judges is in the matrix and does the I/O its criterion reads (a renamed job would
    otherwise leave its checks INVALID, with nothing measured under their name)."""
    for job, rw in G2_FIO_JOBS.items():
        spec = matrix.jobs.get(job)
        if spec is None or spec.rw != rw:
            got = "no such job" if spec is None else f"rw: {spec.rw}"
            raise ConfigError(str(path), f"jobs.{job}", f"a job with rw: {rw}, judged by G2 ({got})")


def check_bindings(g3: G3Profile, refs: References, path: Path) -> None:
    """Every reference a G3 verdict binds exists (a missing reference is never a pass)."""
    bound = [(f"verdicts[{i}].reference", v.reference) for i, v in enumerate(g3.verdicts)]
    if g3.storage is not None:
        bound += [
            (f"storage.verdicts[{i}].reference", v.reference) for i, v in enumerate(g3.storage.verdicts)
        ]
    for field, ref in bound:
        if ref not in refs.ids:
            raise ConfigError(str(path), field, f"a reference of {refs.path} (have: {', '.join(refs.ids)})")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
