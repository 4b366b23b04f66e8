"""The run record's schema, ``kvgate.run/2``: run.json (RunRecord) and each line of checks.jsonl.

Every key of run.json is declared here: a module that writes one that is not is a bug the
store refuses (``RunStore.update_meta``), and an edited file is a StoreError naming the field.
A checks.jsonl line is declared once, as JudgementRecord: the store writes it, and reports,
JUnit, rejudge, history and ``--resume`` read it back as one.

>>> RunRecord.model_validate({"schema": SCHEMA, "gate": "g1", "site": "s", "status": "running"}).gate
'g1'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    model_validator,
)

from kvgate.base.config_file import explain, field_error
from kvgate.base.criteria import COMPARATORS, Inputs, Judgement, Measurement, Verdict
from kvgate.configuration.fio_matrix import MatrixProfile
from kvgate.configuration.gate_profiles import G3Profile, G4Profile
from kvgate.configuration.inventory import Name
from kvgate.configuration.model_profiles import ModelProfile
from kvgate.configuration.reference_schema import Reference
from kvgate.record.environment import HostManifest, ToolVersions, WaiverRecord
from kvgate.record.gate_rows import Contradiction, G2Row, G3Stored, G4Row, MeasurementRecord
from kvgate.record.launches import EngineLaunch, G4Job

SCHEMA = "kvgate.run/2"
Status = Literal["running", "interrupted", "incomplete", "complete"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Open(BaseModel):
    """A gate's own data: its known keys typed, the rest kept for the gate's renderer."""

    model_config = ConfigDict(extra="allow", strict=True)


class InventoryRef(_Record):
    path: str
    sha256: str


class HostEntry(_Record):
    address: str = ""
    transport: str = ""
    roles: list[str] = []


class VolumeEntry(_Record):
    """A volume of the inventory as the reports name it: its kind and the site's description."""

    kind: str
    description: str | None = None
    max_cv: float | None = None  # G2's run-to-run variation bound where the inventory sets its own


class Forced(_Record):
    """A gate run without a passed earlier gate: who forced it, and why."""

    gate: str
    reason: str
    by: str = ""
    at: str = ""


class ConfigFile(_Record):
    """A configuration file as the run used it."""

    path: str
    sha256: str


def _profile_kind(value: Any) -> str | None:
    """Which model reads a recorded gate profile, by what it carries (a fio matrix names its kind)."""
    if isinstance(value, BaseModel):
        return type(value).__name__
    keys = value.keys() if isinstance(value, dict) else set()
    if "kind" in keys and value["kind"] == "fio-matrix":
        return "MatrixProfile"
    return "G3Profile" if "verdicts" in keys else "G4Profile" if "limits" in keys else None


_NO_KIND = "expected G2's fio matrix (kind: fio-matrix), a G3 profile (verdicts) or a G4 profile (limits)"

# the gate profile as the run loaded it: G2's fio matrix, G3's or G4's profile
GateProfile = Annotated[
    Annotated[MatrixProfile, Tag("MatrixProfile")]
    | Annotated[G3Profile, Tag("G3Profile")]
    | Annotated[G4Profile, Tag("G4Profile")],
    Discriminator(_profile_kind, custom_error_type="gate_profile", custom_error_message=_NO_KIND),
]


class Configuration(_Record):
    """What the run was judged with, beyond the inventory: references and gate profiles as loaded."""

    references: ConfigFile | None = None
    # the references the gate bound at plan time (G3), as loaded: what the report says of each
    bound_references: dict[str, Reference] = {}
    gate_profile: GateProfile | None = None
    # G2: each storage workload with the model profile it ran, as loaded (page 1 says what it read)
    workload_models: dict[str, ModelProfile] = {}
    # every configuration file the run read (kvgate.configuration.gateconfig): inventory, references, profiles
    files: dict[str, ConfigFile] = {}


class Rejudged(_Record):
    """This record re-judges a stored run: which one, as it was, and what changed."""

    run: str  # the run directory re-judged
    run_schema: str
    run_manifest_sha256: str
    at: str
    by: str = ""
    changes: list[str] = []  # criteria and waivers that differ, then verdicts that moved
    carried: list[str] = []  # check ids whose verdict was kept: nothing stored to judge again


class _TableData(_Open):
    """reports/templates/sections/table.html's data."""

    columns: list[Any]
    rows: list[list[Any]]


class _ChartData(_Open):
    """reports/templates/sections/chart.html's data (what the SVG may contain is the report's to check)."""

    svg: str = Field(pattern=r"^\s*<svg[\s>]")


# every section template and the data it renders: a new template adds its data model here
SECTION_DATA: dict[str, type[_Open]] = {"table.html": _TableData, "chart.html": _ChartData}


class Section(_Open):
    title: str
    template: str
    data: dict[str, Any] = {}

    @model_validator(mode="after")
    def _data_fits_template(self) -> Section:
        model = SECTION_DATA.get(self.template.removeprefix("sections/"))
        if model is None:
            known = ", ".join(SECTION_DATA)
            raise field_error(("template",), f"expected one of the section templates: {known}", self.template)
        try:
            model.model_validate(self.data)
        except ValidationError as exc:
            e = exc.errors()[0]
            raise field_error(("data", *e["loc"]), explain(dict(e)), None) from None
        return self


class Reach(_Record):
    """What G3 can judge with this inventory, as preflight found it in G3's plan: the references its
    profile binds (as loaded), and why no check of G3's plan can judge each of the others."""

    references: dict[str, Reference] = {}
    unjudged: dict[str, str] = {}  # reference id → why G3 cannot judge it here
    far_above: dict[
        str, str
    ] = {}  # reference id → its verdict and why, if its figure lands far above the seed's


class G4Reach(_Record):
    """What G4 can judge of one deployment on one host, as preflight found it: G4's plan (drift on a
    short soak, what the engine profile cannot show) and the health counters the host had."""

    checks: int  # G4's checks of the deployment on the host
    unjudged: dict[str, str] = {}  # check key → why G4 will not judge it here


class RunRecord(_Record):
    """run.json: one gate run's provenance, configuration, status and the data of its tables."""

    schema_: Literal["kvgate.run/2"] = Field(alias="schema")
    gate: Name  # the names of a run come from an inventory: anything else was edited in
    site: Name
    status: Status
    kvgate_version: str = ""
    git_revision: str = ""
    started_at: str | None = None
    ended_at: str | None = None
    argv: list[str] | str | None = None
    resumes: list[str] = []
    planned: list[str] = []
    forced: list[Forced] = []
    previous_run: str | None = None
    inventory: InventoryRef | None = None
    hosts: dict[Name, HostEntry] = {}
    volumes: dict[Name, VolumeEntry] = {}
    configuration: Configuration = Configuration()
    waivers: list[WaiverRecord] = []  # the waivers file in force, as loaded
    manifest: dict[str, HostManifest] = {}  # the environment G1 recorded, per host
    tool_versions: dict[str, ToolVersions] = {}  # per host
    reference_notes: list[str] = []  # where the published figures do not add up (kvgate references)
    rejudged: Rejudged | None = None
    g3_reach: Reach | None = None  # preflight: which of G3's references this inventory lets G3 judge
    g4_reach: dict[str, G4Reach] = {}  # preflight, per host/deployment: which of G4's checks it can judge
    # the numbers the gate's report tables are laid out from (kvgate.report.gate_tables)
    g2_rows: dict[str, G2Row] = {}
    g3_rows: dict[str, G3Stored] = {}
    g4_rows: dict[str, G4Row] = {}
    # figures of this run that contradict each other, per host/subject (found by the gate, boxed on page 1)
    contradictions: dict[str, list[Contradiction]] = {}
    engines: dict[str, dict[str, EngineLaunch]] = {}  # per host/deployment: each arm's (or soak's) engine
    g4_jobs: dict[str, G4Job] = {}  # detached soaks followed by the controller
    g4_stopped: str | None = None
    sections: list[Section] | None = None  # kept rendered (no gate writes them: rows are laid out)


class ArtifactRecord(_Open):
    """One line of artifacts/index.jsonl: a raw output kept as evidence, with its hash."""

    path: str
    sha256: str = ""
    bytes: int = Field(default=0, ge=0)
    host: str = ""


def measurements_to_record(
    measured: Mapping[str, Measurement], *, evidence: bool = True
) -> dict[str, dict[str, Any]]:
    """Measurements by key as the record keeps them; a gate's table data leaves out the
    ``evidence`` paths (kept with the check's inputs and the gate's artifacts)."""
    exclude = None if evidence else {"evidence"}
    return {key: MeasurementRecord.of(m).model_dump(exclude=exclude) for key, m in measured.items()}


class InputsRecord(_Record):
    """What a check was judged on (kvgate.base.criteria.Inputs): rejudge judges these again.

    >>> i = Inputs({"bw": Measurement("seq.bw", 5.0, "B/s", ("artifacts/h/fio.json",))}, detail="slow")
    >>> InputsRecord.of(i).inputs() == i
    True
    """

    measured: dict[str, MeasurementRecord] = {}
    detail: str = ""
    said: list[str] = []
    blocked: str = ""

    @classmethod
    def of(cls, inputs: Inputs) -> InputsRecord:
        measured = {key: MeasurementRecord.of(m) for key, m in inputs.measured.items()}
        return cls(measured=measured, detail=inputs.detail, said=list(inputs.said), blocked=inputs.blocked)

    def inputs(self) -> Inputs:
        """The Inputs this record was made of."""
        measured = {key: m.measurement() for key, m in self.measured.items()}
        return Inputs(measured, detail=self.detail, said=tuple(self.said), blocked=self.blocked)


class JudgementRecord(_Open):
    """One line of checks.jsonl: a check's verdict, its criterion, and the measurements it was judged on.

    Written by ``RunStore.record`` (which stamps ``at``), read back by ``RunStore.checks``.
    """

    model_config = ConfigDict(frozen=True)

    id: str  # "<host>/<check>"
    host: Name  # an inventory host, or "cluster"
    check: str
    verdict: Verdict = Field(strict=False)  # stored as its string value
    condition: str = ""
    rule: str = ""
    metric: str = ""
    measured: Any = None
    expected: Any = None
    comparator: str = ""
    unit: str = ""
    tolerance: float = Field(default=0.0, strict=False, allow_inf_nan=False)
    source: str = ""
    evidence: list[str] = Field(default=[], strict=False)  # a Measurement's tuple, or a JSON list
    waiver: dict[str, str] | None = None  # {reason, approver, was} of the waiver applied
    duration_s: float = Field(default=0.0, strict=False, allow_inf_nan=False)
    at: str = ""  # UTC, when recorded
    inputs: InputsRecord | None = None  # None: an ERROR, or judged on facts (G1)

    @model_validator(mode="after")
    def _consistent(self) -> JudgementRecord:
        if self.id != f"{self.host}/{self.check}":
            raise ValueError(
                f"id {self.id!r} is not '<host>/<check>' of host {self.host!r}, check {self.check!r}"
            )
        if self.comparator not in ("", *COMPARATORS):
            raise ValueError(
                f"comparator {self.comparator!r} is none of the judge's: {', '.join(COMPARATORS)}"
            )
        return self

    @classmethod
    def from_judgement(
        cls, host: str, check: str, j: Judgement, *, waiver: dict[str, str] | None = None
    ) -> JudgementRecord:
        """The line that records ``j`` as the verdict of ``check`` on ``host``."""
        c, m = j.criterion, j.measurement
        return cls(
            id=f"{host}/{check}",
            host=host,
            check=check,
            verdict=j.verdict,
            condition=j.condition,
            rule=c.rule,
            metric=c.metric,
            measured=None if m is None else m.value,
            expected=c.expected,
            comparator=c.comparator,
            unit=c.unit,
            tolerance=c.tolerance,
            source=c.source,
            evidence=[] if m is None else list(m.evidence),
            waiver=waiver,
            inputs=None if j.inputs is None else InputsRecord.of(j.inputs),
        )

    def to_json(self) -> str:
        """The line as checks.jsonl holds it (keys sorted; a value JSON cannot hold is written as text)."""
        return json.dumps(self.model_dump(), default=str, sort_keys=True)
