"""A gate's catalogue: its plan split into families of checks by rule id (the plans: gate_plans).

>>> from kvgate.configuration.gateconfig import in_memory
>>> from kvgate.configuration.inventory import Inventory
>>> from kvgate.orchestration.g2.plan import plan
>>> inv = Inventory.model_validate({"site": "s", "scale": "smoke",
...     "hosts": {"h": {"roles": ["storage-client"]}},
...     "volumes": {"v": {"path": "/mnt/v", "kind": "candidate", "scratch": True}}})
>>> [c.check for c in family(plan, "G2-KV-1", "G2-KV-2")(in_memory(inv))]
['volume[v].kv_restore.parallel.bw', 'volume[v].kv_restore.serial.bw']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kvgate.configuration.gateconfig import GateConfig
from kvgate.judgement.check import Check

# a gate's checks, from the configuration the run recorded
Plan = Callable[[GateConfig], Sequence[Check[Any]]]


def family(plan: Plan, *rules: str) -> Plan:
    """The checks of ``plan`` whose rule id is one of ``rules``, or starts with one ending in '*'.

    A gate module's families must cover its plan exactly (tests/unit/test_plugin.py checks it).
    """
    exact = {r for r in rules if not r.endswith("*")}
    prefixes = tuple(r[:-1] for r in rules if r.endswith("*"))

    def planned(config: GateConfig) -> list[Check[Any]]:
        return [c for c in plan(config) if c.rule in exact or c.rule.startswith(prefixes or ("\0",))]

    planned.__name__ = f"family({', '.join(rules)})"
    return planned
