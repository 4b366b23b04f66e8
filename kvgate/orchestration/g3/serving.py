"""Client beside engine for every G3 load: TTFT, TPOT and ITL as the load generator saw them and as the
engine's own histograms counted them over the same requests (:mod:`kvgate.probes.engines.latency`).

The client starts TTFT when it sends and stops at the first token chunk it decodes; the
engine (vLLM) from the request's arrival after tokenizing to its first token, so the
client's TTFT is the larger by the HTTP round trip and the tokenization. TPOT and ITL
are comparable as they are: a gap there means the client lagged behind the stream, or
the engine was slowed while this load ran. Per level: medians over its trials, kept as
numbers in the run record (the report's table: kvgate.report.g3_extra_tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvgate.orchestration.g3.load_arms import WHOLE_MACHINE, LoadTrial, level_key
from kvgate.probes.loadgen import median
from kvgate.record import SERVING_KEYS


def level_latency(
    loads: Mapping[str, list[LoadTrial]], whole: Mapping[str, list[LoadTrial]] | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """Per load (``<arm>@c<C>``, ``<arm>@whole``): the medians of the client's and the engine's numbers."""
    groups: dict[str, list[LoadTrial]] = {}
    for arm, trials in loads.items():
        for t in trials:
            groups.setdefault(level_key(arm, t.concurrency), []).append(t)
    for arm, trials in (whole or {}).items():
        groups.setdefault(level_key(arm, WHOLE_MACHINE), []).extend(trials)
    return {key: _medians(trials) for key, trials in sorted(groups.items())}


def as_recorded(levels: Mapping[str, dict[str, dict[str, float]]]) -> list[dict[str, Any]]:
    """The levels as the run record keeps them: a list in measured order (run.json sorts its keys)."""
    return [{"load": key} | v for key, v in levels.items()]


def _medians(trials: list[LoadTrial]) -> dict[str, dict[str, float]]:
    client = [t.summary for t in trials]
    engine = [t.server_latency for t in trials if t.server_latency]
    return {"client": _median_of(client), "engine": _median_of(engine)}


def _median_of(docs: list[dict[str, Any]]) -> dict[str, float]:
    out = {}
    for key in SERVING_KEYS:
        values = [float(d[key]) for d in docs if isinstance(d.get(key), int | float)]
        if values:
            out[key] = median(values)
    return out
