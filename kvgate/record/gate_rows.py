"""What the gates keep in run.json for their report tables: ``g2_rows``, ``g3_rows``, ``g4_rows``.

Rows are keyed ``<host>/<subject>``. The writers (kvgate.orchestration.<gate>.report_rows)
write plain JSON; the store checks it against these models before
the file is written, and every reader gets it back typed, so an edited field is a StoreError
naming the file and the field path. Rows stored before a gate kept numbers hold the table cells
it formatted then: those are read as ``*CellRow`` (the legacy shape, laid out as it was).

>>> stored = {"measurements": {}, "knee": None, "ceiling": None, "sweep": [["1m", 4, 2.5e9]]}
>>> G2Row.model_validate(stored).sweep
[['1m', 4, 2500000000.0]]
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, model_validator

from kvgate.base.criteria import Measurement

Value = float | int | str | bool | None
Cell = str
Cells = list[list[Cell]]
Row = TypeVar("Row", bound=BaseModel)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _LegacyRow(_Row):
    """A row in the shape of an older kvgate: every key has a default, so at least one must be there
    (an emptied row is an edited one, not an old one)."""

    @model_validator(mode="before")
    @classmethod
    def _not_empty(cls, data: Any) -> Any:
        if data == {}:
            raise ValueError(
                f"expected a row with its keys ({', '.join(cls.model_fields)}), got an empty one"
            )
        return data


class MeasurementRecord(BaseModel):
    """A Measurement as the record keeps it: in a check's inputs, and (without evidence) in a gate's rows."""

    model_config = ConfigDict(extra="forbid", strict=True)

    metric: str
    value: Value
    unit: str = ""
    evidence: list[str] = []
    invalid_reason: str | None = None

    @classmethod
    def of(cls, m: Measurement) -> MeasurementRecord:
        return cls(
            metric=m.metric,
            value=m.value,
            unit=m.unit,
            evidence=list(m.evidence),
            invalid_reason=m.invalid_reason,
        )

    def measurement(self) -> Measurement:
        return Measurement(self.metric, self.value, self.unit, tuple(self.evidence), self.invalid_reason)


class ImprovementRow(_Row):
    """A reference's improvement as bound at plan time (kvgate.configuration.reference_schema.Improvement)."""

    stated: str
    kind: str
    low: float
    high: float


class ReferenceRow(_Row):
    id: str
    improvement: ImprovementRow


class VerdictRow(_Row):
    """A check's verdict before waivers, as G3 and G4 keep it (kvgate.orchestration.verdict_rows)."""

    check: str
    measured: Value
    unit: str
    comparator: str
    expected: Value
    expected_unit: str
    source: str
    verdict: str
    reference: ReferenceRow | None = None


# -- G2 ---------------------------------------------------------------------------------------
class SweepCell(_Row):
    """One cell of G2's sweep: the read ceiling's (kvgate.configuration.fio_matrix.SweepPoint)."""

    numjobs: int
    iodepth: int
    bw_bytes_per_s: float
    bs: str = "1m"


class KneeRow(SweepCell):
    """Where bandwidth stopped growing with parallelism (kvgate.configuration.fio_matrix.Knee)."""

    parallelism: int
    saturated: bool
    gain: float


class KneeMark(_Row):
    """Legacy: the knee as the chart's mark, kept by runs before the whole knee was."""

    parallelism: int
    bs: str = "1m"


class G2Row(_Row):
    """One host/volume: its measurements, knee, ceiling cell and sweep points ([bs,] parallelism, B/s)."""

    measurements: dict[str, MeasurementRecord]
    knee: KneeRow | None
    ceiling: SweepCell | None
    sweep: list[list[str | int | float]]


class G2CellRow(_LegacyRow):
    """Legacy: a host/volume's table cells as G2 formatted them before it kept numbers."""

    fio: list[Cell] = []
    workloads: list[Cell] = []
    knee: KneeRow | KneeMark | None = None  # kept beside the cells for the chart by the runs of that time
    sweep: list[list[str | int | float]] = []


# -- G3 ---------------------------------------------------------------------------------------
class ArmFigures(_Row):
    """An arm's trials summarised (``kvgate.orchestration.g3`` summarize, summarize_level): TTFT/E2E
    percentiles, medians with CV, evidence medians, and why its trials cannot be trusted."""

    arm: str
    trials: int
    completed: int
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None
    ttft_cv: float | None
    e2e_p50_s: float | None
    output_throughput_tok_per_s: float | None  # median over trials of output tokens / E2E
    prompt_tokens_p50: float | None
    device_read_bytes_p50: float | None
    engine_read_bytes_p50: float | None
    hit_tokens_p50: float | None
    cache_growth_bytes_p50: float | None
    predicted_bytes_p50: float | None
    restart_to_ready_p50_s: float | None
    invalid_reasons: list[str] = []
    # device bytes / time from the load's start to its last first token (the restores), median
    read_bw_gb_per_s: float | None = None
    # mean TTFT as the client saw it and as the engine's histogram counted it (from arrival), medians
    ttft_mean_s: float | None = None
    server_ttft_mean_s: float | None = None


class PredictionRow(_Row):
    """The planner's numbers for one G3 load beside the measured ones: [predicted, measured]."""

    concurrency: int
    prompt_tokens: int
    restore_ttft_s: list[float | None]
    recompute_ttft_s: list[float | None]
    storage_floor_s: float
    tier_bytes: float
    ceiling: str


class G2Figures(_Row):
    """G2's figures of the tier's volume as the planner used them (bytes/s; None: unknown)."""

    measured: bool
    read_ceiling_bytes_per_s: float | None
    kv_restore_request_bytes_per_s: float | None
    best_read_bytes_per_s: float | None
    source: str


class G3Figures(_Row):
    """The raw numbers behind one deployment's tables and charts, arms in report order."""

    arms: dict[str, ArmFigures]
    predictions: list[PredictionRow]
    g2: Annotated[G2Figures | None, BeforeValidator(lambda v: v or None)] = None  # {}: no prediction made


class DeploymentFacts(_Row):
    """What a deployment's engine kind can show (the report's notes)."""

    tier: str
    kind: str
    serves_concurrently: bool
    external_tier: bool
    tier_notes: str
    near_ties: list[str]
    loadgen_address: str | None


class ServingLevel(_Row):
    """One load's latency, as the client and the engine's own histograms saw it (ms; absent: not exported)."""

    load: str
    client: dict[str, float]
    engine: dict[str, float]


class G3DeploymentRow(_Row):
    """One host/deployment (kvgate.orchestration.g3.report_rows.rows)."""

    deployment: DeploymentFacts
    verdicts: list[VerdictRow]
    serving: list[ServingLevel]
    figures: G3Figures


class StorageVolumes(_Row):
    candidate: str
    baseline: str
    devices: dict[str, str | None]
    measured: dict[str, dict[str, MeasurementRecord]]  # volume → metric → measurement


class VolumeFigures(_Row):
    """A volume's role and times in seconds for the charts (None: not measured or not trusted)."""

    role: str
    model_load_s: float | None
    engine_weights_load_s: float | None
    engine_ready_s: float | None
    checkpoint_write_s: float | None


class StorageFigures(_Row):
    volumes: dict[str, VolumeFigures]


class G3StorageRow(_Row):
    """One host's model-load and checkpoint on both volumes (``<host>/storage[<candidate>]``)."""

    volumes: StorageVolumes
    verdicts: list[VerdictRow]
    figures: StorageFigures


def _g3_figures(data: Any) -> Any:
    """A storage row's figures hold its volumes; a deployment's, its arms."""
    if not isinstance(data, dict):
        return data
    return (StorageFigures if "volumes" in data else G3Figures).model_validate(data)


class G3CellRow(_LegacyRow):
    """Legacy: a host/deployment's table cells as G3 formatted them before it kept numbers.

    From 2026-12-05 07:28 (af7968d) until G3 kept numbers (e549b38), runs also kept the charts'
    raw numbers beside the cells (``figures``), in the shape G3 keeps them now: a deployment's
    arms, predictions and G2 figures, or a storage row's volumes.
    """

    arms: Cells = []
    evidence: Cells = []
    verdicts: Cells = []
    engines: Cells = []
    predictions: Cells = []
    serving: Cells = []
    storage: Cells = []
    limits: str = ""
    figures: Annotated[G3Figures | StorageFigures | None, BeforeValidator(_g3_figures)] = None


# -- G4 ---------------------------------------------------------------------------------------
class SoakFacts(_Row):
    ended: str
    near_ties: list[str]
    tier: str
    serves_concurrently: bool


class SoakFigures(_Row):
    cap_bytes: int | None  # the tiers' summed capacity; None: no external tier


class G4Row(_Row):
    """One host/deployment's verdicts and soak (kvgate.orchestration.g4.report_rows.rows)."""

    verdicts: list[VerdictRow]
    soak: SoakFacts
    figures: SoakFigures


class G4CellRow(_LegacyRow):
    """Legacy: a host/deployment's table cells as G4 formatted them before it kept numbers."""

    windows: Cells = []
    verdicts: Cells = []
    notes: str = ""
    figures: SoakFigures | None = None  # kept beside the cells for the charts by the runs of that time


# -- shapes by key ----------------------------------------------------------------------------
def _shape(numbers: type[Row], cells: type[Row], *, key: str) -> BeforeValidator:
    """A row stored with ``key`` holds numbers; one without it, the legacy cells."""

    def pick(data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        return (numbers if key in data else cells).model_validate(data)

    return BeforeValidator(pick)


def _g3_shape(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    if "volumes" in data:
        return G3StorageRow.model_validate(data)
    return (G3DeploymentRow if "deployment" in data else G3CellRow).model_validate(data)


G2Stored = Annotated[G2Row | G2CellRow, _shape(G2Row, G2CellRow, key="measurements")]
G3Stored = Annotated[G3DeploymentRow | G3StorageRow | G3CellRow, BeforeValidator(_g3_shape)]
G4Stored = Annotated[G4Row | G4CellRow, _shape(G4Row, G4CellRow, key="soak")]
