"""What the gates keep in run.json for their report tables: ``g2_rows``, ``g3_rows``, ``g4_rows``.

Rows are keyed ``<host>/<subject>``. The writers (kvgate.orchestration.<gate>.report_rows)
write plain JSON; the store checks it against these models before
the file is written, and every reader gets it back typed, so an edited field is a StoreError
naming the file and the field path.

>>> stored = {"measurements": {}, "knee": None, "ceiling": None, "sweep": [["1m", 4, 2.5e9]]}
>>> G2Row.model_validate(stored).sweep
[['1m', 4, 2500000000.0]]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from kvgate.base.criteria import Measurement
from kvgate.configuration.gate_profiles import CAPACITY_ARMS, READ_ARMS, VOLUME_ARMS, WHOLE_VOLUME_ARMS

Value = float | int | str | bool | None


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


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


# -- contradictions (every gate) --------------------------------------------------------------
class Figure(_Row):
    """One figure of a run, named by what produced it."""

    name: str  # "KV restore, parallel readers"
    value: float
    unit: str  # "B/s", "I/Os in flight", "B"
    source: str  # where the run keeps it: its metric, or its artifact


class Contradiction(_Row):
    """Two figures of one run that cannot both stand as trusted, and what that means for the reader.

    >>> f = Figure(name="knee", value=16, unit="I/Os in flight", source="sweep-read.knee_parallelism")
    >>> Contradiction(where="h/v", first=f, second=f, meaning="the sweep did not find the knee").where
    'h/v'
    """

    where: str  # "<host>/<volume>" or "<host>/<deployment>"
    first: Figure
    second: Figure
    meaning: str


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


class G2Row(_Row):
    """One host/volume: its measurements, knee, ceiling cell and sweep points ([bs,] parallelism, B/s)."""

    measurements: dict[str, MeasurementRecord]
    knee: KneeRow | None
    ceiling: SweepCell | None
    sweep: list[list[str | int | float]]
    virtual: str = ""  # a virtual machine's disks, what their counters cannot see; "" on bare metal


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
    # trusted only with these said: another reader shared the device (both byte counts, the host's load)
    qualifications: list[str] = []
    # the engine's own read bytes / its restore time (a load: to its last first token), median
    read_bw_gb_per_s: float | None = None
    # mean TTFT as the client saw it and as the engine's histogram counted it (from arrival), medians
    ttft_mean_s: float | None = None
    server_ttft_mean_s: float | None = None


def held_little(arms: Mapping[str, ArmFigures]) -> set[str]:
    """The dram-only arms that reused no prompt token, or under a quarter of those the ssd-tier arm at
    their level did: a DRAM cache smaller than the load, whose rows are recompute more than a DRAM tier
    (a reader found the label on three of four levels, 12.6 % unlabelled, and 0 of 0 unlabelled)."""
    out = set()
    for name, dram in arms.items():
        ssd = arms.get(name.replace("dram-only@", "ssd-tier@", 1))
        reused, against = dram.hit_tokens_p50, ssd.hit_tokens_p50 if ssd else None
        if (
            name.startswith("dram-only@")
            and reused is not None
            and (reused == 0 or (against and reused < against / 4))
        ):
            out.add(name)
    return out


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


def arm_order(arms: Collection[str]) -> list[str]:
    """The arms in the order the report shows them: one prompt, each concurrency, whole machine, the
    volumes (R2/R3) level by level, R1 (run.json keeps ``G3Figures.arms`` by name).

    >>> arm_order(["parallel-read@c4", "recompute", "recompute@c8", "serial-read@c4", "warm", "warm@c8",
    ...            "candidate-volume@c4", "baseline-volume@c4"])  # doctest: +NORMALIZE_WHITESPACE
    ['recompute', 'warm', 'recompute@c8', 'warm@c8', 'baseline-volume@c4', 'candidate-volume@c4',
     'serial-read@c4', 'parallel-read@c4']
    """
    apart = (*READ_ARMS, *VOLUME_ARMS, *WHOLE_VOLUME_ARMS)
    levels = sorted({int(k.split("@c")[1]) for k in arms if "@c" in k and k.split("@")[0] not in apart})
    names = ("recompute", "ssd-restore", "warm", *CAPACITY_ARMS)
    order = [a for a in names if a in arms]
    order += [f"{a}@c{c}" for c in levels for a in names if f"{a}@c{c}" in arms]
    order += [f"{a}@whole" for a in names if f"{a}@whole" in arms]
    for pair in (VOLUME_ARMS, WHOLE_VOLUME_ARMS):
        at = sorted({int(k.split("@c")[1]) for k in arms if k.split("@")[0] in pair and "@c" in k})
        order += [f"{a}@c{c}" for c in at for a in pair if f"{a}@c{c}" in arms]
    return order + [k for r in READ_ARMS for k in arms if k.split("@")[0] == r]  # serial, then parallel


class DeploymentFacts(_Row):
    """What a deployment's engine kind can show (the report's notes)."""

    tier: str
    kind: str
    model: str  # what the deployment served: shape, size, KV bytes per token (kvgate.probes.engines)
    serves_concurrently: bool
    external_tier: bool
    tier_notes: str
    near_ties: list[str]
    loadgen_address: str | None
    capacity_figure: bool  # False: the inventory turned kvgate's capacity figure off (not run)


SERVING_KEYS = ("p50_ttft_ms", "mean_ttft_ms", "p50_tpot_ms", "mean_tpot_ms", "p50_itl_ms", "mean_itl_ms")


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
    model_load_metric: str | None  # its measurement (volumes.measured): the fastest trusted loader's
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


# -- G4 ---------------------------------------------------------------------------------------
class SoakFacts(_Row):
    ended: str
    near_ties: list[str]
    tier: str
    model: str  # what the deployment served, as G3's DeploymentFacts names it
    serves_concurrently: bool


class SoakFigures(_Row):
    cap_bytes: int | None  # the tiers' summed capacity; None: no external tier


class IntegrityFailure(_Row):
    """One place the integrity load found wrong: what, where, when (first seen), how often seen."""

    kind: str  # mismatch | read-error | write-error | fio-error
    source: str  # fio | checkpoint | kv
    volume: str
    file: str
    offset_bytes: int | None
    length_bytes: int | None
    first_seen_unix_s: float
    windows: list[int]  # the soak windows it was seen in
    times_seen: int
    detail: str


class IntegrityFigures(_Row):
    """The integrity load beside one deployment's soak (kvgate.orchestration.g4.integrity)."""

    volume: str
    cycles: int
    share_bytes_per_s: int  # declared in the G4 profile
    io_bytes: int  # what it read and wrote, measured
    span_s: float
    device_bytes: int | None  # the candidate device's bytes over the windows (engines + integrity)
    cpu_s: float | None  # the integrity agent's own CPU (not fio's)
    verified_bytes: int  # checkpoint and KV cells compared with their checksums
    fio_verified_bytes: int  # fio blocks read back and checked (crc32c)
    failures: list[IntegrityFailure]
    error: str  # why it did not run or ended early; "" when it ran to the soak's end


class DriftFigure(_Row):
    """One series judged as a slope (kvgate.orchestration.g4.drift.judge): what the report draws.

    Values are in the series' own unit (MiB, ms, tok/s, share of the tier's cap); slopes per hour,
    relative ones as a share of ``scale`` (the first windows' median). A figure that could not be
    judged has only the first four fields and ``invalid``.
    """

    key: str
    metric: str
    unit: str
    limit_per_h: float
    invalid: str | None
    scale: float | None = None
    growth_per_h: float | None = None  # judged: worse is positive
    whole_per_h: float | None = None
    tail_per_h: float | None = None
    plateau: bool | None = None
    judged_on: str | None = None  # all | tail
    interval_per_h: float | None = None  # the 95 % half-width
    windows: int | None = None
    tail_windows: int | None = None
    span_h: float | None = None
    fit_from_h: float | None = None  # the judged fit's line, from here ...
    fit_from_value: float | None = None
    end_value: float | None = None  # ... to the last window
    projected_72h: float | None = None
    limit_72h: float | None = None


class KernelLine(_Row):
    time_unix_s: float
    kind: str  # OOM | hung task | I/O error | multipath | NVMe-oF | RDMA | NVMe
    line: str
    window: int | None  # the soak window it fell in


class HealthFigures(_Row):
    """Device health and kernel log over one deployment's soak (kvgate.orchestration.g4.health)."""

    snapshots: int
    first_unix_s: float | None
    last_unix_s: float | None
    values: dict[str, float | int | None]  # by check key: the delta (or worst) judged
    skipped: dict[str, str]  # by check key: what this host has none of
    kernel_source: str | None  # journal | dmesg
    kernel_error: str
    kernel_since_unix_s: float
    kernel_until_unix_s: float
    kernel_lines: list[KernelLine]


class G4Row(_Row):
    """One host/deployment's verdicts and soak (kvgate.orchestration.g4.report_rows.rows)."""

    verdicts: list[VerdictRow]
    soak: SoakFacts
    figures: SoakFigures
    integrity: IntegrityFigures
    drift: list[DriftFigure]
    health: HealthFigures


# -- a G3 row by what it holds ----------------------------------------------------------------
def _g3_shape(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    return (G3StorageRow if "volumes" in data else G3DeploymentRow).model_validate(data)


G3Stored = Annotated[G3DeploymentRow | G3StorageRow, BeforeValidator(_g3_shape)]
