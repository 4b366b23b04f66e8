"""Inventory: schema and loader. ``load("inventory/local.yaml")`` validates once."""

from kvgate.configuration.inventory.loader import LoadedInventory, load
from kvgate.configuration.inventory.schema import Expectations, Host, Inventory, Role, Volume, VolumeKind

__all__ = ["Expectations", "Host", "Inventory", "LoadedInventory", "Role", "Volume", "VolumeKind", "load"]
