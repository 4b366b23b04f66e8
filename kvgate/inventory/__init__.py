"""Inventory: schema and loader. ``load("inventory/local.yaml")`` validates once."""

from kvgate.inventory.loader import LoadedInventory, load
from kvgate.inventory.schema import Expectations, Host, Inventory, Role, Volume, VolumeKind

__all__ = ["Expectations", "Host", "Inventory", "LoadedInventory", "Role", "Volume", "VolumeKind", "load"]
