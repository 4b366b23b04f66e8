"""G3 report sections: the arms table, the verdicts against the references, the engines and their limits.

Rows are kept per host/deployment in run.json (``g3_rows``), so a resumed run adds
to the earlier rows; the sections are rebuilt from all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvgate.base.criteria import Inputs, Measurement, fmt
from kvgate.configuration.gate_profiles.g3 import CAPACITY_ARMS, READ_ARMS
from kvgate.configuration.references import show_bound
from kvgate.orchestration.g3 import prediction, serving
from kvgate.orchestration.g3.arms import ArmSummary
from kvgate.orchestration.g3.measure import DeploymentResult
from kvgate.orchestration.g3.plan import G3Check
from kvgate.orchestration.g3.storage import StorageCheck, StorageResult, evaluate_storage

MiB = float(1 << 20)
ARM_COLUMNS = [
    "host/engine",
    "arm",
    "trials ok/run",
    "prompt tokens p50",
    "TTFT p50 s",
    "TTFT p90 s",
    "TTFT p99 s",
    "TTFT CV",
    "TTFT mean s client / engine",
    "E2E p50 s",
    "output tok/s",
]
EVIDENCE_COLUMNS = [
    "host/engine",
    "arm",
    "device MiB read",
    "engine MiB read",
    "restore read GB/s",
    "tokens restored",
    "tier growth MiB (predicted)",
    "restart-to-ready s",
    "trusted",
]
VERDICT_COLUMNS = [
    "host/engine",
    "check",
    "measured",
    "reference",
    "site threshold",
    "against the seed",
    "source",
    "verdict",
]
ENGINE_COLUMNS = [
    "host/engine",
    "arm",
    "profile",
    "version",
    "command line",
    "ready s",
    "weights load s",
    "concurrency",
]


def _num(value: float | None, scale: float = 1.0, digits: int = 3) -> str:
    return "—" if value is None else f"{value / scale:.{digits}g}" if digits else f"{value / scale:.0f}"


def _means(s: ArmSummary) -> str:
    """Client and engine-side (its /metrics histogram) mean TTFT of the loads, where both are known."""
    if s.ttft_mean_s is None and s.server_ttft_mean_s is None:
        return "—"
    return f"{_num(s.ttft_mean_s)} / {_num(s.server_ttft_mean_s)}"


def arm_row(where: str, s: ArmSummary) -> list[str]:
    """One arm's latency numbers as table cells."""
    return [
        where,
        s.arm,
        f"{s.completed}/{s.trials}",
        _num(s.prompt_tokens_p50, digits=0),
        _num(s.ttft_p50_s),
        _num(s.ttft_p90_s),
        _num(s.ttft_p99_s),
        _num(s.ttft_cv, digits=2),
        _means(s),
        _num(s.e2e_p50_s),
        _num(s.output_throughput_tok_per_s),
    ]


def evidence_row(where: str, s: ArmSummary) -> list[str]:
    """One arm's storage evidence (medians over trials) and whether its numbers can be trusted."""
    growth = "—"
    if s.cache_growth_bytes_p50 is not None:
        growth = f"{s.cache_growth_bytes_p50 / MiB:.1f} ({_num(s.predicted_bytes_p50, MiB)})"
    trusted = "no: " + "; ".join(s.invalid_reasons) if s.invalid_reasons else "yes"
    return [
        where,
        s.arm,
        _num(s.device_read_bytes_p50, MiB),
        _num(s.engine_read_bytes_p50, MiB),
        _num(s.read_bw_gb_per_s),
        _num(s.hit_tokens_p50, digits=0),
        growth,
        _num(s.restart_to_ready_p50_s),
        trusted,
    ]


def verdict_row(check: G3Check, r: DeploymentResult) -> list[str]:
    """Measured, reference, site threshold and source of one check (verdict before waivers)."""
    j = check.evaluate(Inputs(r.measurements, detail=r.detail(check.key)))
    m, c = j.measurement, check.criterion
    measured = "—" if m is None or m.value is None else f"{fmt(m.value)} {m.unit}".strip()
    position = "—"
    if check.bound is not None:
        ref = check.bound.reference
        reference = f"{ref.id}: {ref.improvement.stated}"
        threshold = f"{c.comparator} {show_bound(ref.improvement.kind, c.expected)}"
        position = check.bound.position(m) or "—"
    else:
        reference, threshold = "site rule", f"{c.comparator} {fmt(c.expected)} {c.unit}".strip()
    return [
        f"{r.host}/{r.deployment}",
        check.check,
        measured,
        reference,
        threshold,
        position,
        c.source,
        j.verdict.value,
    ]


def engine_rows(r: DeploymentResult) -> list[list[str]]:
    """Version, full command line and restart-to-ready of each engine the arms ran on."""
    rows = []
    for arm, rec in sorted(r.engines.items()):
        conc = "concurrent" if rec["serves_concurrently"] else "1 request at a time"
        argv = " ".join(rec["argv"])
        where = f"{r.host}/{r.deployment}"
        weights = "not logged" if rec.get("weights_load_s") is None else f"{rec['weights_load_s']:.2f}"
        rows.append(
            [where, arm, rec["profile"], rec["version"], argv, f"{rec['ready_s']:.2f}", weights, conc]
        )
    return rows


def rows(r: DeploymentResult, checks: list[G3Check]) -> dict[str, Any]:
    """Everything the G3 sections show for one deployment on one host (stored in run.json)."""
    levels = sorted({int(k.split("@c")[1]) for k in r.arms if "@c" in k and k.split("@")[0] not in READ_ARMS})
    names = ("recompute", "ssd-restore", "warm", *CAPACITY_ARMS)
    order = [a for a in names if a in r.arms] + [
        f"{a}@c{c}" for c in levels for a in names if f"{a}@c{c}" in r.arms
    ]
    order += [f"{a}@whole" for a in names if f"{a}@whole" in r.arms]
    order += [k for k in r.arms if k.split("@")[0] in READ_ARMS]
    where = f"{r.host}/{r.deployment}"
    return {
        "arms": [arm_row(where, r.arms[a]) for a in order],
        "evidence": [evidence_row(where, r.arms[a]) for a in order],
        "verdicts": [verdict_row(c, r) for c in checks],
        "engines": engine_rows(r),
        "limits": limits_note(r),
        "predictions": prediction.rows(where, r.predictions),
        "serving": serving.rows(where, r.serving),
        "figures": figures(r, order),
    }


def figures(r: DeploymentResult, order: list[str]) -> dict[str, Any]:
    """The raw numbers behind the tables, for the report's charts (kvgate.report.g3_plots)."""
    return {
        "arms": {a: r.arms[a].to_dict() for a in order},
        "predictions": r.predictions,
        "g2": r.g2_figures,
    }


# What kvgate found about an engine kind's tier, and how the protocol copes (said in the report).
KIND_LIMITS = {
    "llama-cpp": (
        "Its disk cache (llama-cpp-python 0.3.36 LlamaDiskCache) pops the best prefix match on every "
        "lookup, even a one-token (BOS) match, so populating a second prompt deletes the first one's "
        "entry: each trial runs on a fresh tier directory, and the engine's own restored-token count "
        "(its log) is part of the cold proof. So it cannot hold a document set (and its diskcache keeps "
        "diskcache's 1 GiB limit): the capacity arms' ssd-tier runs llama-cpp-disk-keep, the same server "
        "with a disk cache that keeps what it serves, sized by --cache_size."
    ),
}


ROW_NOTES: tuple[tuple[Callable[[str], bool], str], ...] = (  # (is an arm key of these rows, what they are)
    (
        lambda key: key.endswith("@whole"),
        " Rows <arm>@whole: every engine instance of the host driven together (request i to "
        "instance i mod N), medians over trials of each load's TTFT p50 and output throughput.",
    ),
    (
        lambda key: key.split("@")[0] in CAPACITY_ARMS,
        " Rows dram-only@… / ssd-tier@… (R2/R3's capacity gains): the same engine without and with "
        "its SSD tier (its profile's capacity_arms), the same turns over shared documents visited "
        "round-robin (workloads/g3/<scale>.yaml capacity), warm-up excluded, the page cache dropped "
        "before each round; medians over rounds of each round's TTFT p50 and output throughput. "
        "Tokens restored: every prompt token the engine reused in the round.",
    ),
    (
        lambda key: key.split("@")[0] in READ_ARMS,
        " Rows serial-read@c<C> / parallel-read@c<C> (R1): the same C prompts restored cold by the "
        "deployment's serial and parallel tier reader (engines.<name>.cold_read), each on a fresh tier; "
        "restore read GB/s = device bytes / time from the load's start to its last first token.",
    ),
)


def limits_note(r: DeploymentResult) -> str:
    """What this engine cannot show, said plainly in the report."""
    t = r.tier
    conc = (
        f"{t.name} serves one request at a time: every arm ran at concurrency 1, and the R2/R3 "
        "concurrency gains (conc 8/16) are not evaluable on it."
        if not t.serves_concurrently
        else f"{t.name} serves requests concurrently: the arms ran one prompt per trial, then at each "
        "concurrency level (rows <arm>@c<C>: medians over trials of each load's TTFT p50 and output "
        "throughput)."
    )
    conc += "".join(note for rows, note in ROW_NOTES if any(rows(k) for k in r.arms))
    if t.cache is None:
        conc += (
            f" {t.name} has no external KV tier: only recompute and warm (DRAM prefix cache) were measured, "
            "so every SSD-restore verdict is not evaluable on it."
        )
    if r.near_ties:
        conc += (
            f" {len(r.near_ties)} cached output(s) differed from recompute's only from a near-tied token "
            "on (each side's token in the other's top-k logprobs), tolerated as vLLM's own tests do "
            f"(check_logprobs_close); first: {r.near_ties[0]}."
        )
    where = f"{conc} {loadgen_note(r)} {t.notes.strip()} {KIND_LIMITS.get(t.kind.value, '')}"
    return f"{r.host}/{r.deployment}: {where}".strip()


def loadgen_note(r: DeploymentResult) -> str:
    """Where the client ran, which decides whether TTFT includes the lab network."""
    if r.loadgen_address is None:
        return "The load generator ran on the engine host (127.0.0.1): TTFT excludes the lab network."
    return (
        f"The load generator ran on the control node, reaching the engines at {r.loadgen_address} "
        "(engines.<name>.loadgen: controller): TTFT includes the network path."
    )


EVIDENCE_NOTE = (
    "Counters bracketing exactly the measured request. Device bytes are those of the devices that carry "
    "the candidate volume (a multipath head's paths, an LV's disks; on NFS, the client's reads from the "
    "server) and count every reader during the window (another tenant's I/O can only raise them); engine "
    "bytes are summed over every process the engine started (its session or container cgroup). "
    "Tokens restored: the engine's own count (its log). Tier growth: the tier directory after "
    "populate, against prompt tokens × the model's state bytes per token. Restore read GB/s: the device's "
    "bytes over the request's TTFT (one prompt), or over the time to a load's last first token."
)
NOTE = (
    "One prompt per trial, each with its own salt. ssd-restore: populate on a fresh tier directory on the "
    "candidate volume, check write-through, restart the engine and drop the page cache, then send the prompt "
    "again with the volume's device counters, the engine's process-tree read bytes and its hit counter "
    "bracketing "
    "exactly that request. warm: the same prompt once more without restart. Arms run in blocks (every "
    "recompute trial, then the tier engines'), so no two engines share a GPU group. TTFT percentiles over "
    "the trials (numpy linear, as vllm bench serve); CV = population std / mean. Completion tokens: "
    "llama-cpp-python sends no usage when streaming, so every request must end by length (max_tokens); "
    "prompt tokens are counted with the engine's tokenizer."
)


def sections(stored: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The G3 sections of the report, from every stored host/deployment."""
    ordered, limits = in_order(stored, "limits")
    return [
        table("G3 arms: recompute vs SSD restore vs warm", ARM_COLUMNS, "arms", ordered, f"{NOTE} {limits}"),
        table(
            "G3 restore evidence (medians over trials)", EVIDENCE_COLUMNS, "evidence", ordered, EVIDENCE_NOTE
        ),
        table(
            "G3 verdicts against the references",
            VERDICT_COLUMNS,
            "verdicts",
            ordered,
            "Site threshold = the reference's lower bound × the gate profile's threshold_fraction "
            "(workloads/g3/<scale>.yaml). Verdicts before waivers; the checks table shows waivers.",
        ),
        table("G3 engines", ENGINE_COLUMNS, "engines", ordered, limits),
        table(
            "G3 predicted (tiering planner) vs measured",
            prediction.COLUMNS,
            "predictions",
            ordered,
            prediction.NOTE,
        ),
        table(
            "G3 serving latency: client vs engine, every load",
            serving.COLUMNS,
            "serving",
            ordered,
            serving.NOTE,
        ),
        table(
            "G3 model loading and checkpoint: candidate vs baseline",
            STORAGE_COLUMNS,
            "storage",
            ordered,
            STORAGE_NOTE,
        ),
    ]


def in_order(stored: dict[str, dict[str, Any]], note: str) -> tuple[list[dict[str, Any]], str]:
    """The stored host/deployments in the report's order, and their ``note`` fields joined."""
    ordered = [stored[k] for k in sorted(stored)]
    return ordered, " ".join(r[note] for r in ordered)


def table(
    title: str, columns: list[str], key: str, ordered: list[dict[str, Any]], note: str
) -> dict[str, Any]:
    body = [row for r in ordered for row in r.get(key, [])]
    return {
        "title": title,
        "template": "table.html",
        "data": {"columns": columns, "rows": body, "note": note},
    }


def storage_rows(r: StorageResult, checks: list[StorageCheck]) -> dict[str, Any]:
    """One host's model-load and checkpoint numbers per volume, and its R9/R1 verdict rows."""
    where = f"{r.host}/storage"
    numbers = []
    for volume, role in ((r.candidate, "candidate"), (r.baseline, "baseline")):
        ms = r.measured.get(volume, {})
        load = r.statistic(volume, "model_load_s")
        loader = load.metric.split(".")[1] if load is not None and load.metric.count(".") == 2 else "—"
        numbers.append(
            [
                r.host,
                volume,
                role,
                str(r.devices.get(volume) or "—"),
                _measured(load),
                loader,
                _measured(ms.get("engine.weights_load_s")),
                _measured(ms.get("engine.ready_s")),
                _measured(ms.get("checkpoint.write_s")),
                _measured(ms.get("checkpoint.write_bw_bytes_per_s"), 1e9),
                "no: " + "; ".join(_reasons(ms)) if _reasons(ms) else "yes",
            ]
        )
    verdicts = [storage_verdict_row(where, c, r) for c in checks]
    return {
        "arms": [],
        "evidence": [],
        "engines": [],
        "limits": "",
        "storage": numbers,
        "verdicts": verdicts,
        "figures": {"volumes": storage_figures(r)},
    }


STORAGE_FIGURES = {
    "model_load_s": "model_load_s",
    "engine_weights_load_s": "engine.weights_load_s",
    "engine_ready_s": "engine.ready_s",
    "checkpoint_write_s": "checkpoint.write_s",
}


def storage_figures(r: StorageResult) -> dict[str, dict[str, Any]]:
    """Per volume: its role and each time in seconds (None: not measured or not trusted), for the charts."""
    out: dict[str, dict[str, Any]] = {}
    for volume, role in ((r.candidate, "candidate"), (r.baseline, "baseline")):
        ms = r.measured.get(volume, {})
        found = {
            k: r.statistic(volume, k) if k == "model_load_s" else ms.get(m)
            for k, m in STORAGE_FIGURES.items()
        }
        out[volume] = {"role": role} | {k: _trusted(m) for k, m in found.items()}
    return out


def _trusted(m: Measurement | None) -> float | None:
    if m is None or m.invalid_reason or isinstance(m.value, bool) or not isinstance(m.value, int | float):
        return None
    return float(m.value)


def storage_verdict_row(where: str, c: StorageCheck, r: StorageResult) -> list[str]:
    """One R9/R1 verdict: measured, reference, site threshold, against the seed, source, verdict."""
    j = evaluate_storage(c, r)
    assert c.bound is not None, "every storage check is bound to its reference"
    ref = c.bound.reference
    threshold = f"{c.criterion.comparator} {show_bound(ref.improvement.kind, c.criterion.expected)}"
    m = j.measurement
    position = c.bound.position(m) or "—"
    reference = f"{ref.id}: {ref.improvement.stated}"
    return [where, c.check, _measured(m), reference, threshold, position, c.criterion.source, j.verdict.value]


def _measured(m: Measurement | None, scale: float = 1.0) -> str:
    if m is None or not isinstance(m.value, (int, float)):
        return "—"
    return f"{fmt(m.value / scale)} {m.unit if scale == 1.0 else ''}".strip()


def _reasons(ms: dict[str, Measurement]) -> list[str]:
    return sorted({m.invalid_reason for m in ms.values() if m.invalid_reason})


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
