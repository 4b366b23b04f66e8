"""Inventory: the lab as the site engineer writes it. ``load("inventory/local.yaml")`` validates once.

schema.py   Inventory and its frozen parts: hosts (roles, SSH route), volumes (candidate,
            baseline, scratch), engine deployments, the bill of materials (Expectations)
fields.py   field types whose values reach a shell, a regex engine or a destructive write
            (names, environment names, patterns, ProxyJump, volume and scratch paths), checked at load
ports.py    each engine's slot of ports: its own and LMCache's API server's, one per TP rank
loader.py   read and validate an inventory file, its sha256 kept for the run record
"""

from kvgate.configuration.inventory.fields import Environment, Name, Regex
from kvgate.configuration.inventory.loader import LoadedInventory, load
from kvgate.configuration.inventory.ports import API_PORT_OFFSET, engine_port, port_span, tensor_parallel
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
    "API_PORT_OFFSET",
    "CLUSTER",
    "EngineDeployment",
    "Environment",
    "Expectations",
    "Host",
    "Inventory",
    "LoadedInventory",
    "Name",
    "NfsServer",
    "NicExpect",
    "NvmeExpect",
    "NvmeofExpect",
    "Regex",
    "RoceExpect",
    "Role",
    "Volume",
    "VolumeExpect",
    "VolumeKind",
    "engine_port",
    "load",
    "parse_constraint",
    "port_span",
    "tensor_parallel",
]
