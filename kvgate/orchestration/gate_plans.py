"""The plan modules of each gate, by gate name: what rejudge and the pytest plugin plan from; and
what preflight records of G3's plan (``record_g3_reach``).

It sits above the gates' plans (orchestration), so the judgement package below them names none.

>>> [p.__name__ for p in plans("g2")]
['plan', 'nic_plan']
"""

from __future__ import annotations

from kvgate.base.errors import UsageError
from kvgate.configuration.gateconfig import GateConfig
from kvgate.judgement import Plan, reach
from kvgate.record import GATES, PREFLIGHT, RunStore


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
    if gate != PREFLIGHT:  # a run.json naming another gate is not judged as a preflight
        raise UsageError(f"unknown gate {gate!r}; expected one of {', '.join((*GATES, PREFLIGHT))}")
    from kvgate.orchestration.preflight import plan as preflight

    return (preflight,)


def record_g3_reach(store: RunStore, config: GateConfig) -> None:
    """Preflight: which references G3's profile binds this inventory lets G3 judge (G3's plan, not run),
    and why not each other, in the preflight's run record (``g3_reach``)."""
    bound = config.g3.reference_ids()
    refs = {i: config.references.get(i).model_dump(mode="json") for i in bound}
    planned = [c for p in plans("g3") for c in p(config)]
    unjudged = reach(planned, bound).unjudged
    far_above = {  # judged only if the figure lands within reach of the seed's range
        c.rule: f"{c.bound.far_above.verdict.value}: {c.bound.far_above.reason}"
        for c in planned
        if c.ruled is None and c.bound is not None and c.bound.far_above is not None and c.bound.comparable
    }
    store.merge_meta(g3_reach={"references": refs, "unjudged": unjudged, "far_above": far_above})
