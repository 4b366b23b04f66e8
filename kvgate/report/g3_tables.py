"""G3's report tables, laid out at render time from the numbers G3 recorded (``g3_rows``).

Per host/deployment G3 keeps its arms' summaries (``figures.arms``, in report order), its
verdicts before waivers (with the reference each is bound to), its serving latency, the
planner's predictions and what its engine kind can show (``deployment``); the engines
each arm ran on are run.json's ``engines``. Per host/storage[<candidate>] it keeps both
volumes' measurements and which loader's time stands for each (kvgate.orchestration.g3.report_rows).

>>> cell(0.23456), cell(2048.0, digits=0), cell(None)
('0.235', '2048', '—')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kvgate.base.units import MB
from kvgate.configuration.reference_schema import Improvement
from kvgate.configuration.references import improvement_position, show_bound
from kvgate.record import (
    ArmFigures,
    G3StorageRow,
    G3Stored,
    Section,
    VerdictRow,
    arm_order,
    held_little,
)
from kvgate.report import g3_extra_tables as extra
from kvgate.report.engine_tables import Engines, engine_cells, engine_tables
from kvgate.report.g3_notes import EVIDENCE_NOTE, NOTE, limits_note
from kvgate.report.numbers import DISAGREE_CV, cell, cited, human
from kvgate.report.tables import Cells, in_order, limit_cell, measured_cell, table

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
    "device MB read",
    "engine MB read",
    "restore read GB/s",
    "tokens restored",
    "tier growth MB (predicted)",
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
VERDICT_NOTE = (
    "Site threshold = the reference's lower bound as printed, less half its last digit (the seed's 26 % "
    "stands for 25.5 % and up), × the G3 profile's threshold fraction (1 unless the profile allows for a "
    "smaller lab than the seed's). Verdicts before waivers; the checks table shows waivers."
)


def _means(s: ArmFigures) -> str:
    """Client and engine-side (its /metrics histogram) mean TTFT of the loads, where both are known."""
    if s.ttft_mean_s is None and s.server_ttft_mean_s is None:
        return "—"
    return f"{cell(s.ttft_mean_s)} / {cell(s.server_ttft_mean_s)}"


def arm_cells(where: str, s: ArmFigures, *, small_cache: bool = False) -> list[str]:
    """One arm's latency numbers as table cells; an arm another reader shared the device with says so
    beside its name (a reader found such a row's TTFT used unmarked, its qualification tables away), and
    a DRAM tier that reused little of what the SSD tier beside it did (``small_cache``) too."""
    shared = f" (device shared in {len(s.qualifications)} of {s.trials} trials)" if s.qualifications else ""
    small = " (its cache held little of the load: mostly recompute)" if small_cache else ""
    return [
        where,
        s.arm + small + shared,
        f"{s.completed}/{s.trials}",
        cell(s.prompt_tokens_p50, digits=0),
        cell(s.ttft_p50_s),
        cell(s.ttft_p90_s),
        cell(s.ttft_p99_s),
        # a CV in % everywhere in the report; past half, its trials disagree (a reader found 54 % unmarked)
        human(s.ttft_cv, "ratio")
        + (" (trials disagree)" if s.ttft_cv is not None and s.ttft_cv > DISAGREE_CV else ""),
        _means(s),
        cell(s.e2e_p50_s),
        cell(s.output_throughput_tok_per_s),
    ]


def evidence_cells(where: str, s: ArmFigures) -> list[str]:
    """One arm's storage evidence (medians over trials) and whether its numbers can be trusted."""
    growth = "—"
    if s.cache_growth_bytes_p50 is not None:
        growth = f"{s.cache_growth_bytes_p50 / MB:.1f} ({cell(s.predicted_bytes_p50, MB)})"
    return [  # decimal MB, as the page-1 figures and the GB/s beside them (the reader met MB, MiB and GB)
        where,
        s.arm,
        cell(s.device_read_bytes_p50, MB),
        cell(s.engine_read_bytes_p50, MB),
        cell(s.read_bw_gb_per_s),
        cell(s.hit_tokens_p50, digits=0),
        growth,
        cell(s.restart_to_ready_p50_s),
        trusted(s),
    ]


def trusted(s: ArmFigures) -> str:
    """'yes', 'no: <every reason>', or 'qualified (2 of 5): <the first>' (a shared device)."""
    if s.invalid_reasons:
        return "no: " + "; ".join(s.invalid_reasons)
    if s.qualifications:
        return f"qualified ({len(s.qualifications)} of {s.trials}): {s.qualifications[0]}"
    if s.device_read_bytes_p50 and s.engine_read_bytes_p50 == 0:
        # an arm that reads no tier (dram-only, recompute): what the device read was not the engine's
        return "yes: the engine read nothing from the volume; the device's reads were another reader's"
    return "yes"


def verdict_cells(where: str, v: VerdictRow) -> list[str]:
    """Measured, reference, site threshold, against the seed and source of one verdict (before waivers)."""
    reference, threshold, position = "site rule", limit_cell(v), "—"
    if (ref := v.reference) is not None:
        imp = Improvement.model_validate(ref.improvement.model_dump())
        reference = f"{ref.id}: {imp.stated}"
        if isinstance(v.expected, bool) or not isinstance(v.expected, int | float):
            raise ValueError(f"{v.check}: a reference's bound must be a number, got {v.expected!r}")
        threshold = f"{v.comparator} {show_bound(imp.kind, v.expected)}"
        value = v.measured
        if v.verdict == "SKIP":  # measured, not judged: not placed against the seed's range either
            position = "not compared"
        elif isinstance(value, int | float) and not isinstance(value, bool):
            position = improvement_position(imp, float(value))
    return [where, v.check, measured_cell(v), reference, threshold, position, cited(v.source), v.verdict]


TABLES = ("arms", "evidence", "verdicts", "engines", "predictions", "serving", "storage")


def laid_out(where: str, row: G3Stored, engines: Engines) -> tuple[dict[str, Cells], str]:
    """One stored host/deployment or host/storage row: its cells per table, and its note on limits."""
    cells: dict[str, Cells] = {t: [] for t in TABLES}
    if isinstance(row, G3StorageRow):
        cells["storage"] = extra.storage_cells(where.partition("/")[0], row)
        cells["verdicts"] = [verdict_cells(f"{where.partition('/')[0]}/storage", v) for v in row.verdicts]
        return cells, ""
    stored_arms = row.figures.arms  # run.json keeps them by name: the report's order is arm_order's
    arms = [stored_arms[a] for a in arm_order(sorted(stored_arms))]
    cells["arms"] = [arm_cells(where, s, small_cache=s.arm in held_little(stored_arms)) for s in arms]
    cells["evidence"] = [evidence_cells(where, s) for s in arms]
    cells["verdicts"] = [verdict_cells(where, v) for v in row.verdicts]
    cells["engines"] = engine_cells(where, engines.get(where) or {})
    cells["predictions"] = extra.prediction_cells(where, row.figures.predictions)
    cells["serving"] = extra.serving_cells(where, row.serving)
    return cells, limits_note(where, row.deployment, [a.arm for a in arms], engines.get(where) or {})


def g2_runs(stored: Mapping[str, G3Stored]) -> str:
    """' G2's figures: localhost/tiny-llama from G2 run g2-… (BASELINE RECORDED, kvgate …).'"""
    named = [
        f"{where} from {row.figures.g2.source.partition(': ')[0]}"
        for where, row in in_order(stored)
        if not isinstance(row, G3StorageRow) and row.figures.g2 is not None and row.figures.g2.measured
    ]
    return f" G2's figures: {'; '.join(named)}." if named else ""


ARMS_TITLE = "G3 arms: recompute vs SSD restore vs warm"  # its note says what each engine cannot show


def sections(stored: Mapping[str, G3Stored], engines: Engines, planned: Sequence[str] = ()) -> list[Section]:
    """The G3 sections of the report, from every stored host/deployment (``engines``: run.json's);
    ``planned``: every check id, so the verdict table names those no stored row holds."""
    parts = [laid_out(k, r, engines) for k, r in in_order(stored)]
    rows = {t: [c for cells, _ in parts for c in cells[t]] for t in TABLES}
    limits = " ".join(note for _, note in parts)
    held = {f"{k.partition('/')[0]}/{v.check}" for k, r in stored.items() for v in r.verdicts}
    unheld = [c for c in planned if c not in held]
    verdicts_note = VERDICT_NOTE + (
        f" Not in this table: {len(unheld)} planned check{'s' if len(unheld) > 1 else ''} that measured "
        f"nothing, each judged at plan time (Findings says why): {', '.join(unheld)}."
        if unheld
        else ""
    )
    return [
        table(ARMS_TITLE, ARM_COLUMNS, rows["arms"], f"{NOTE} {limits}"),
        table("G3 restore evidence (medians over trials)", EVIDENCE_COLUMNS, rows["evidence"], EVIDENCE_NOTE),
        table("G3 verdicts against the references", VERDICT_COLUMNS, rows["verdicts"], verdicts_note),
        table(
            "G3 predicted (tiering planner) vs measured",
            extra.PREDICTION_COLUMNS,
            rows["predictions"],
            f"{extra.PREDICTION_NOTE}{g2_runs(stored)}",
        ),
        table(
            "G3 serving latency: client vs engine, every load",
            extra.SERVING_COLUMNS,
            rows["serving"],
            extra.SERVING_NOTE,
        ),
        table(
            "G3 model loading and checkpoint: candidate vs baseline",
            extra.STORAGE_COLUMNS,
            rows["storage"],
            extra.STORAGE_NOTE,
        ),
        *engine_tables("G3", rows["engines"], "What each engine cannot show is said under “G3 arms”."),
    ]
