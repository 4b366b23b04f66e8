"""R9's cold starts without order bias: one untimed warm-up, then timed starts alternating the volumes.

The first start of an engine on a host pays for every start-up cache outside the model
directory (Python bytecode, compiled kernels, the interpreter's own files); were the
candidate always started first, once, it would pay them all. So G3 starts the engine once
untimed, then ``storage.engine_starts`` times per volume in alternating order (candidate,
baseline, baseline, candidate, …: ABBA), each cold (:func:`kvgate.orchestration.g3.engine_load.start_cold`).
A volume's figure is the median of its timed starts, shown with every start and their spread.

>>> order(("fx100", "nfs"), 2)
[('fx100', 0), ('nfs', 0), ('nfs', 1), ('fx100', 1)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kvgate.base.criteria import Measurement
from kvgate.probes.loadgen import median

Start = Callable[[str, str], dict[str, Measurement]]  # (volume, label) → that start's measurements
TIMED = ("ready_s", "weights_load_s")  # the times a start measures, per engine key


def order(volumes: tuple[str, str], starts: int) -> list[tuple[str, int]]:
    """(volume, its start index) in the order they run: the pair, then reversed, and so on."""
    out: list[tuple[str, int]] = []
    for k in range(starts):
        pair = volumes if k % 2 == 0 else volumes[::-1]
        out += [(v, k) for v in pair]
    return out


def run_starts(volumes: tuple[str, str], starts: int, start: Start) -> dict[str, dict[str, Measurement]]:
    """The warm-up (untimed, on the first volume), then every timed start; each volume's combined figures."""
    start(volumes[0], "warm-up")
    timed: dict[str, list[dict[str, Measurement]]] = {v: [] for v in volumes}
    for volume, k in order(volumes, starts):
        timed[volume].append(start(volume, f"start-{k}"))
    return {v: combine(found) for v, found in timed.items()}


def combine(found: Sequence[dict[str, Measurement]]) -> dict[str, Measurement]:
    """One volume's timed starts as one figure per time: the median, every start and their spread."""
    keys = dict.fromkeys(k for f in found for k in f)
    out: dict[str, Measurement] = {}
    for key in keys:
        ms = [f[key] for f in found if key in f]
        if not key.endswith(TIMED):
            out[key] = ms[0]  # a failed start's status: its reason stands
            continue
        out |= _timed(key, ms, len(found))
    return out


def _timed(key: str, ms: list[Measurement], starts: int) -> dict[str, Measurement]:
    values = [
        float(m.value) for m in ms if isinstance(m.value, int | float) and not isinstance(m.value, bool)
    ]
    reasons = list(dict.fromkeys(m.invalid_reason for m in ms if m.invalid_reason))
    if len(values) < starts:
        reasons.append(f"{starts - len(values)} of {starts} timed starts gave no {key.rsplit('.', 1)[1]}")
    evidence = tuple(e for m in ms for e in m.evidence)
    mid = median(values) if values else None
    unit = ms[0].unit
    shown = ", ".join(f"{v:.3g}" for v in values)
    spread = (max(values) - min(values)) / mid if values and mid else None
    return {
        key: Measurement(ms[0].metric, mid, unit, evidence, "; ".join(reasons) or None),
        f"{key}_starts": Measurement(f"{key}_starts", f"{shown} {unit}".strip(), "", evidence),
        f"{key}_spread": Measurement(f"{key}_spread", spread, "x", evidence),
    }
