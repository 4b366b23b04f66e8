"""Read and validate an inventory file; remember its hash for the run record."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from kvgate.base.config_file import load_model, parse_yaml, read_bytes
from kvgate.configuration.inventory.schema import Inventory


@dataclass(frozen=True)
class LoadedInventory:
    """An inventory with where it came from."""

    path: Path
    sha256: str
    inventory: Inventory

    @property
    def site(self) -> str:
        return self.inventory.site


def load(path: str | Path) -> LoadedInventory:
    """Load and validate an inventory; raises ConfigError naming file, field and expectation."""
    p = Path(path)
    raw = read_bytes(p)  # read once: the hash is of the bytes that were validated
    inv = _resolve_engine_pythons(load_model(p, Inventory, parse_yaml(raw, p)), p.parent)
    return LoadedInventory(path=p, sha256=hashlib.sha256(raw).hexdigest(), inventory=inv)


def _resolve_engine_pythons(inv: Inventory, base: Path) -> Inventory:
    """A relative ``engines.<name>.python`` names a file next to the inventory (``../.venv-vllm/...``)."""
    engines = {
        # normpath, not resolve(): a venv's python is a symlink, and resolving it leaves the venv
        name: dep.model_copy(update={"python": os.path.normpath(base.absolute() / dep.python)})
        if dep.python and not dep.python.startswith("/") and "/" in dep.python
        else dep
        for name, dep in inv.engines.items()
    }
    return inv.model_copy(update={"engines": engines})
