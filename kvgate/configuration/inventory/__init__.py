"""Inventory: schema and loader. ``load("inventory/local.yaml")`` validates once."""

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
