"""G3's planner, serving-latency and storage tables, laid out at render time from ``g3_rows``.

>>> t = {"p50_ttft_ms": 40.0, "mean_ttft_ms": 42.0, "p50_tpot_ms": 2.0, "mean_itl_ms": 2.1}
>>> e = {"mean_ttft_ms": 38.0, "p50_ttft_ms": 37.5, "mean_itl_ms": 2.0, "p50_tpot_ms": 2.0}
>>> pair(t, e, "p50_ttft_ms"), pair(t, e, "mean_itl_ms"), pair(t, {}, "p50_tpot_ms")
('0.04 / ≈0.0375', '2.1 / 2', '2 / —')
"""

from __future__ import annotations

from collections.abc import Mapping

from kvgate.base.criteria import Measurement, fmt
from kvgate.record import SERVING_KEYS, G3StorageRow, PredictionRow, ServingLevel
from kvgate.report.numbers import cell, human
from kvgate.report.tables import Cells

PREDICTION_COLUMNS = [
    "host/engine",
    "load",
    "prompt tokens",
    "restore TTFT p50 s predicted / measured",
    "recompute TTFT p50 s predicted / measured",
    "storage floor s",
    "SSD tier GB",
]
PREDICTION_NOTE = (
    "The tiering planner (kvgate plan) on this lab: the restore from G2's read ceiling and per-request "
    "KV-restore bandwidth of the tier's volume (the latest G2 run of this inventory with no check failed "
    "or unevaluated, named below; without one, "
    "the volume's expect: promise), the recompute from this run's own recompute arm (its prefill rate, "
    "one prompt at a time: that one-prompt figure is the rate's source, not a prediction of it), the "
    "median request served in arrival order. Storage floor: no restore of "
    "the load can finish sooner; a restore faster than G2's best read (+25 %) is INVALID. The planner "
    "counts the storage's reads and the queue, not the engine's own work around them (loading the state "
    "into its cache, scheduling): a restore measured at several times its prediction spent most of its "
    "time outside the storage. G2's figures are what G2 read, a cache below the host included: where G2 "
    "says its volume was read through a hypervisor, so is the ceiling here. — : not predicted (no figure) or "
    "not measured (no such arm on this engine)."
)
SERVING_COLUMNS = [
    "host/engine",
    "load",
    "TTFT p50 s client / engine",  # TTFT in seconds everywhere in the report
    "TTFT mean s client / engine",
    "TPOT p50 ms client / engine",
    "TPOT mean ms client / engine",
    "ITL p50 ms client / engine",
    "ITL mean ms client / engine",
]
SERVING_NOTE = (
    "Each load's latency as the load generator measured it (vllm bench serve's definitions) and as the "
    "engine's own /metrics histograms counted it over exactly that load (TTFT: vllm:time_to_first_token_"
    "seconds, from arrival after tokenizing; TPOT: per-request decode time / (tokens − 1); ITL: between "
    "token outputs); medians over the level's trials. Engine means are exact (sum / count); engine p50s "
    "(≈) are estimated from its histogram buckets, as Prometheus' histogram_quantile does, so one may sit "
    "above the client's exact p50 by up to its bucket's width. The client's "
    "TTFT includes the HTTP round trip and tokenization the engine's does not; a TPOT or ITL gap says the "
    "client lagged behind the stream or the engine was slowed while the load ran: a mean more than 10 % "
    "past the engine's is marked (client +N %). — : not exported."
)
STORAGE_COLUMNS = [
    "host",
    "volume",
    "role",
    "device",
    "model load s",
    "fastest loader",
    "engine weights load s",
    "engine ready s",
    "checkpoint write s",
    "checkpoint write GB/s",
    "trusted",
]
STORAGE_NOTE = (
    "The agent's model-load (every loader, cold: page cache dropped, device reads counted) and checkpoint "
    "(write, then cold read-back with checksums) workloads on each volume; R9 compares the fastest trusted "
    "loader's time, R1 the snapshot write. The engine (the deployment's recompute profile) also starts cold "
    "from a model copy on each volume: its own weight-load time, from its log, judges R9 a second time."
)


def prediction_cells(where: str, predictions: list[PredictionRow]) -> Cells:
    """The rows of one deployment's predictions (kvgate.orchestration.g3.prediction)."""
    return [
        [
            where,
            "one prompt" if p.concurrency == 1 else f"conc {p.concurrency}",
            str(p.prompt_tokens),
            against_prediction(p.restore_ttft_s),
            recompute_cell(p),
            cell(p.storage_floor_s),
            cell(p.tier_bytes / 1e9),
        ]
        for p in predictions
    ]


def against_prediction(pair: list[float | None]) -> str:
    """``predicted / measured``, and how far the measurement landed from the prediction.

    >>> against_prediction([0.101, 0.239])
    '0.101 / 0.239 (2.4× the prediction)'
    >>> against_prediction([None, 0.239])
    '— / 0.239'
    """
    said = " / ".join(cell(v) for v in pair)
    predicted, measured = pair
    return f"{said} ({measured / predicted:.2g}× the prediction)" if predicted and measured else said


def recompute_cell(p: PredictionRow) -> str:
    """``predicted / measured``; one prompt's recompute is the measurement the rate comes from, not a
    prediction of it (a reader took '21.2 / 21.2' for a prediction that held)."""
    if p.concurrency == 1:
        return f"{cell(p.recompute_ttft_s[1])} (the rate's source)"
    return against_prediction(p.recompute_ttft_s)


def pair(client: Mapping[str, float], engine: Mapping[str, float], key: str) -> str:
    """``client / engine`` for one statistic (TTFT in s, TPOT and ITL in ms); an engine p50 is a bucket
    estimate (≈).

    >>> pair({"mean_itl_ms": 93.3}, {"mean_itl_ms": 79.4}, "mean_itl_ms")
    '93.3 / 79.4 (client +18 %)'
    """
    mark, scale = "≈" if key.startswith("p50") else "", 1000.0 if "_ttft_" in key else 1.0
    c, e = client.get(key), engine.get(key)
    said = f"{cell(c, scale)} / {'—' if e is None else mark + cell(e, scale)}"
    # both means are exact: a client past the engine's by more than LAGGED read the stream late (a reader
    # found ITL 93 ms at the client against 79 at the engine with nothing marked)
    if key.startswith("mean") and "_ttft_" not in key and c and e and c > (1 + LAGGED) * e:
        said += f" (client +{human(c / e - 1, 'ratio')})"
    return said


LAGGED = 0.1  # of a decode mean: past the engine's own by this share, the client lagged behind the stream


def serving_cells(where: str, levels: list[ServingLevel]) -> Cells:
    """One row per load level, in the order G3 measured them: every statistic as ``client / engine``."""
    return [[where, v.load, *(pair(v.client, v.engine, k) for k in SERVING_KEYS)] for v in levels]


def storage_cells(host: str, row: G3StorageRow) -> Cells:
    """Both volumes' model-load and checkpoint numbers (kvgate.orchestration.g3.report_rows.storage_rows)."""
    volumes = row.volumes
    out = []
    for volume, role in ((volumes.candidate, "candidate"), (volumes.baseline, "baseline")):
        ms = {k: m.measurement() for k, m in volumes.measured.get(volume, {}).items()}
        fastest = row.figures.volumes[volume].model_load_metric  # the loader G3 judged the volume by
        load = None if fastest is None else ms[fastest]
        loader = load.metric.split(".")[1] if load is not None and load.metric.count(".") == 2 else "—"
        reasons = sorted({m.invalid_reason for m in ms.values() if m.invalid_reason})
        out.append(
            [
                host,
                volume,
                role,
                str(volumes.devices.get(volume) or "—"),
                shown(load),
                loader,
                shown(ms.get("engine.weights_load_s")),
                shown(ms.get("engine.ready_s")),
                shown(ms.get("checkpoint.write_s")),
                shown(ms.get("checkpoint.write_bw_bytes_per_s"), 1e9),
                "no: " + "; ".join(reasons) if reasons else "yes",
            ]
        )
    return out


def shown(m: Measurement | None, scale: float = 1.0) -> str:
    if m is None or not isinstance(m.value, int | float):
        return "—"
    return f"{fmt(m.value / scale)} {m.unit if scale == 1.0 else ''}".strip()
