"""The plan modules of each gate, by gate name: what rejudge and the pytest plugin plan from.

It sits above the gates' plans (orchestration), so the judgement package below them names none.

>>> [p.__name__ for p in plans("g2")]
['plan', 'nic_plan']
"""

from __future__ import annotations

from kvgate.judgement import Plan


def plans(gate: str) -> tuple[Plan, ...]:
    """The plan modules of a gate: what it checks (imported here, so rejudge loads only its gate)."""
    if gate == "g1":
        from kvgate.orchestration.g1 import plan as g1

        return (g1,)
    if gate == "g2":
        from kvgate.orchestration.g2 import nic_plan
        from kvgate.orchestration.g2 import plan as g2

        return (g2, nic_plan)
    if gate == "g3":
        from kvgate.orchestration.g3 import plan as g3
        from kvgate.orchestration.g3 import storage_plan

        return (g3, storage_plan)
    if gate == "g4":
        from kvgate.orchestration.g4 import plan as g4

        return (g4,)
    from kvgate.orchestration.preflight import plan as preflight

    return (preflight,)
