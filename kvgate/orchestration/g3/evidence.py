"""Pure decisions on G3 evidence: was the restore cold, did the tier write through, did a capacity
round compare capacity, did another reader share the device (whether the output is right:
kvgate.probes.loadgen.outputs).

Each function returns ``None`` when the evidence holds, or the reason — with the
numbers — that turns the trial INVALID (cold proof, write-through, workload
shape) or the correctness check FAIL. Nothing here touches a host.

Why each exists (FIELD-NOTES): a "cold" restore is trusted only when the device
and the engine process read what the restore needs (LMCache #1522, #1755) and the
engine says it restored the prompt (LMCache #1741, #2765: benchmarks of a tier
that was never read); write-through is checked before restoring (sglang PR
#33712); restored greedy outputs must equal recompute (LMCache #4385, #4991), up to
a near-tie flip as vLLM's own tests allow (``kvgate.probes.loadgen.outputs``).

The cold proof of a restore is :func:`kvgate.orchestration.g3.window.restore_reason`, in the words of
:mod:`kvgate.probes.evidence`.
"""

from __future__ import annotations

from typing import Any

from kvgate.configuration.gate_profiles import CAPACITY_ARMS, Capacity, ColdBounds, WriteThrough
from kvgate.probes.evidence import Counts, cold_reason


def _ratio(got: float, want: float) -> str:
    return f"{got / want:.0%}" if want else "n/a"


def write_through_reason(bounds: WriteThrough, *, growth_bytes: int, predicted_bytes: int) -> str | None:
    """Why the populate did not write the predicted state to the tier directory; None when it did.

    >>> write_through_reason(WriteThrough(), growth_bytes=0, predicted_bytes=1000)
    'no write-through: the tier directory grew 0 B for 1000 B predicted (0% < 90%)'
    """
    low, high = bounds.min_ratio * predicted_bytes, bounds.max_ratio * predicted_bytes
    if growth_bytes < low:
        return (
            f"no write-through: the tier directory grew {growth_bytes} B for {predicted_bytes} B predicted "
            f"({_ratio(growth_bytes, predicted_bytes)} < {bounds.min_ratio:.0%})"
        )
    if growth_bytes > high:
        return (
            f"the tier directory grew {growth_bytes} B for {predicted_bytes} B predicted "
            f"({_ratio(growth_bytes, predicted_bytes)} > {bounds.max_ratio:.0%}): something else wrote there"
        )
    return None


def shape_reason(
    *, prompt_tokens: int | None, target: int, tolerance: float, finish_reason: str | None
) -> str | None:
    """Why the request was not the workload it was meant to be (length off target, early stop).

    >>> shape_reason(prompt_tokens=700, target=1024, tolerance=0.05, finish_reason="stop")
    'prompt has 700 tokens, target 1024 ±5%; completion ended by stop before max_tokens'
    """
    reasons = []
    if prompt_tokens is None:
        reasons.append("prompt tokens not counted")
    elif abs(prompt_tokens - target) > tolerance * target:
        reasons.append(f"prompt has {prompt_tokens} tokens, target {target} ±{tolerance:.0%}")
    if finish_reason != "length":
        reasons.append(f"completion ended by {finish_reason} before max_tokens")
    return "; ".join(reasons) or None


DRAM_ONLY = CAPACITY_ARMS[0]


def shape_reasons(
    records: list[dict[str, Any]], tokens: list[int | None], *, target: int, tolerance: float
) -> list[str | None]:
    """Each answered request of a load (by index) against the workload: its prompt's tokens, its finish."""
    ordered = sorted(records, key=lambda r: int(r.get("index", 0)))
    return [
        shape_reason(
            prompt_tokens=n, target=target, tolerance=tolerance, finish_reason=r.get("finish_reason")
        )
        for r, n in zip(ordered, tokens, strict=False)
        if r.get("success")
    ]


def capacity_reason(
    arm: str,
    capacity: Capacity,
    *,
    reused: int | None,
    reusable: int,
    counts: Counts | None,
    state_bytes_per_token: int,
    min_hit_ratio: float,
    caches_dropped: bool,
) -> str | None:
    """Why one round's numbers cannot stand; None when its evidence holds.

    Every round must show what the engine reused; an ssd-tier round must have reused its
    documents (``min_hit_ratio`` of their tokens) and read them from the candidate's device
    and in the engine (``min_tier_read_ratio`` of their state). Whether the dram-only arm
    held the set is a property of all its rounds at a level (:func:`dram_held_reason`).

    >>> cap = Capacity(documents=8, reuse=0.75, concurrency=(4,))
    >>> why = capacity_reason("ssd-tier", cap, reused=400, reusable=1000, counts=None,
    ...                       state_bytes_per_token=1, min_hit_ratio=0.9, caches_dropped=True)
    >>> why.split(": ", 1)[1].split(": ")[0]
    "the engine reused 400 of the documents' 1000 tokens (40% < 90%)"
    """
    if reused is None:
        return f"{arm}: the engine's reused prompt tokens are unknown: the round cannot show what served it"
    if arm == DRAM_ONLY:
        return None
    reasons: list[str | None] = []
    if reused < min_hit_ratio * reusable:
        share = f"{reused / reusable:.0%}" if reusable else "n/a"
        reasons.append(
            f"{arm}: the engine reused {reused} of the documents' {reusable} tokens ({share} < "
            f"{min_hit_ratio:.0%}): the set did not fit its SSD tier, or the tier lost it"
        )
    if counts is not None:
        reasons.append(
            cold_reason(
                counts,
                needed_bytes=reused * state_bytes_per_token,
                what="reused prefixes",
                caches_dropped=caches_dropped,
                engines=True,
                min_ratio=capacity.min_tier_read_ratio,
            )
        )
    return "; ".join(r for r in reasons if r) or None


def dram_held_reason(capacity: Capacity, *, reused: int, reusable: int) -> str | None:
    """Why the dram-only rounds of one level do not compare capacity: its DRAM tier held the set.

    Judged over the level's rounds together: an engine's DRAM tier may keep a document or two
    (llama-cpp-python's RAM cache refreshes whichever entry a miss's one-token match finds first),
    but reusing half the documents' tokens means the set was not past it.

    >>> cap = Capacity(documents=8, reuse=0.75, concurrency=(4,))
    >>> dram_held_reason(cap, reused=700, reusable=1000).split(": ")[1]
    "the engine reused 700 of the documents' 1000 tokens over the level's rounds (70% ≥ 50%)"
    """
    if not reusable or reused < capacity.max_dram_hit_ratio * reusable:
        return None
    return (
        f"{DRAM_ONLY}: the engine reused {reused} of the documents' {reusable} tokens over the "
        f"level's rounds ({reused / reusable:.0%} ≥ {capacity.max_dram_hit_ratio:.0%}): its DRAM tier held "
        "the set (raise capacity.documents)"
    )


def shared_device_reason(
    bounds: ColdBounds, *, device_bytes: int | None, engine_bytes: int | None, host_load: str | None
) -> str | None:
    """Why an arm's evidence is qualified: its device read far more than its engine did.

    The device's counters count every reader of the device; the engine's, only its own reads.
    A restore's bandwidth is the engine's bytes over its time either way; when the device
    read more than ``max_device_ratio`` × that, another reader shared the device in the window.
    Either way the device may read ``max_idle_device_bytes`` more than the engine (a log, metadata).
    An arm whose engine read nothing from the volume (recompute, a DRAM tier) is held the same
    way: past ``max_idle_device_bytes`` of device reads, another reader shared the device (and the
    host) while it was measured — the figure it is compared with was not taken alone either.

    >>> shared_device_reason(ColdBounds(), device_bytes=5_260_000_000, engine_bytes=770_000_000,
    ...                      host_load="load 3.1 (1 min), CPU steal 2%").split("; ")
    ['another reader shared the device: it read 5.26 GB while the engine read 0.77 GB (6.83× > 1.5×)', \
'load 3.1 (1 min), CPU steal 2%']
    >>> shared_device_reason(ColdBounds(), device_bytes=194e6, engine_bytes=139_264, host_load=None)[-40:]
    ' (1,393× > 1.5×); host load not recorded'
    >>> shared_device_reason(ColdBounds(), device_bytes=623_000, engine_bytes=24_600, host_load=None) is None
    True
    >>> shared_device_reason(ColdBounds(), device_bytes=9_411_000_000, engine_bytes=0, host_load=None)[:72]
    'another reader shared the device: it read 9.41 GB while the engine read '
    """
    if device_bytes is None:
        return None
    said = f"another reader shared the device: it read {device_bytes / 1e9:.3g} GB while the engine read"
    load = host_load or "host load not recorded"
    if not engine_bytes:
        idle = device_bytes <= bounds.max_idle_device_bytes
        return None if idle else f"{said} nothing from it; {load}"
    # within the ratio, or within what an idle arm may read (a log, metadata: 0.6 MB beside the engine's
    # 25 kB was "25×" and called the demo's quiet host shared)
    if device_bytes <= max(
        bounds.max_device_ratio * engine_bytes, engine_bytes + bounds.max_idle_device_bytes
    ):
        return None
    times = device_bytes / engine_bytes
    shown = f"{times:,.0f}" if times >= 100 else f"{times:.3g}"  # 1,393×, never 1.39e+03×
    return f"{said} {engine_bytes / 1e9:.3g} GB ({shown}× > {bounds.max_device_ratio:g}×); {load}"
