"""Inventory: the lab as the site engineer writes it. ``load("inventory/local.yaml")`` validates once.

schema.py   Inventory and its frozen parts: hosts (roles, SSH route), volumes (candidate,
            baseline, scratch), engine deployments, the bill of materials (Expectations)
fields.py   field types whose values reach a shell, a regex engine or a destructive write
            (names, patterns, ProxyJump, volume and scratch paths), checked at load
loader.py   read and validate an inventory file, its sha256 kept for the run record
"""

from kvgate.configuration.inventory.fields import Name
from kvgate.configuration.inventory.loader import LoadedInventory, load
from kvgate.configuration.inventory.schema import (
    CLUSTER,
    EngineDeployment,
    Expectations,
    Host,
    Inventory,
    NfsServer,
    NicExpect,
    NvmeExpect,
    NvmeofExpect,
    RoceExpect,
    Role,
    Volume,
    VolumeExpect,
    VolumeKind,
    parse_constraint,
)

__all__ = [
    "CLUSTER",
    "EngineDeployment",
    "Expectations",
    "Host",
    "Inventory",
    "LoadedInventory",
    "Name",
    "NfsServer",
    "NicExpect",
    "NvmeExpect",
    "NvmeofExpect",
    "RoceExpect",
    "Role",
    "Volume",
    "VolumeExpect",
    "VolumeKind",
    "load",
    "parse_constraint",
]
