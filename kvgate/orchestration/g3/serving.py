"""Client beside engine for every G3 load: TTFT, TPOT and ITL as the load generator saw them and as the
engine's own histograms counted them over the same requests (:mod:`kvgate.probes.engines.latency`).

The client starts TTFT when it sends and stops at the first token chunk it decodes; the
engine (vLLM) from the request's arrival after tokenizing to its first token, so the
client's TTFT is the larger by the HTTP round trip and the tokenization. TPOT and ITL
are comparable as they are: a gap there means the client lagged behind the stream, or
the engine was slowed while this load ran. Per level: medians over its trials.

>>> t = {"p50_ttft_ms": 40.0, "mean_ttft_ms": 42.0, "p50_tpot_ms": 2.0, "mean_itl_ms": 2.1}
>>> e = {"mean_ttft_ms": 38.0, "p50_ttft_ms": 37.5, "mean_itl_ms": 2.0, "p50_tpot_ms": 2.0}
>>> pair(t, e, "p50_ttft_ms"), pair(t, e, "mean_itl_ms"), pair(t, {}, "p50_tpot_ms")
('40 / ≈37.5', '2.1 / 2', '2 / —')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvgate.orchestration.g3.load_arms import WHOLE_MACHINE, LoadTrial, level_key
from kvgate.probes.loadgen.metrics import median

COLUMNS = [
    "host/engine",
    "load",
    "TTFT p50 ms client / engine",
    "TTFT mean ms client / engine",
    "TPOT p50 ms client / engine",
    "TPOT mean ms client / engine",
    "ITL p50 ms client / engine",
    "ITL mean ms client / engine",
]
KEYS = ("p50_ttft_ms", "mean_ttft_ms", "p50_tpot_ms", "mean_tpot_ms", "p50_itl_ms", "mean_itl_ms")
NOTE = (
    "Each load's latency as the load generator measured it (vllm bench serve's definitions) and as the "
    "engine's own /metrics histograms counted it over exactly that load (TTFT: vllm:time_to_first_token_"
    "seconds, from arrival after tokenizing; TPOT: per-request decode time / (tokens − 1); ITL: between "
    "token outputs); medians over the level's trials. Engine means are exact (sum / count); engine p50s "
    "(≈) are estimated from its histogram buckets, as Prometheus' histogram_quantile does. The client's "
    "TTFT includes the HTTP round trip and tokenization the engine's does not; a TPOT or ITL gap says the "
    "client lagged behind the stream or the engine was slowed while the load ran. — : not exported."
)


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


def _medians(trials: list[LoadTrial]) -> dict[str, dict[str, float]]:
    client = [t.summary for t in trials]
    engine = [t.server_latency for t in trials if t.server_latency]
    return {"client": _median_of(client), "engine": _median_of(engine)}


def _median_of(docs: list[dict[str, Any]]) -> dict[str, float]:
    out = {}
    for key in KEYS:
        values = [float(d[key]) for d in docs if isinstance(d.get(key), int | float)]
        if values:
            out[key] = median(values)
    return out


def pair(client: Mapping[str, float], engine: Mapping[str, float], key: str) -> str:
    """``client / engine`` for one statistic; an engine p50 is a bucket estimate (≈)."""
    mark = "≈" if key.startswith("p50") else ""
    c, e = client.get(key), engine.get(key)
    return f"{_ms(c)} / {'—' if e is None else mark + _ms(e)}"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def rows(where: str, levels: Mapping[str, Mapping[str, Mapping[str, float]]]) -> list[list[str]]:
    """One row per load level: every statistic as ``client / engine``."""
    return [[where, key, *(pair(v["client"], v["engine"], k) for k in KEYS)] for key, v in levels.items()]
