"""The typed run record: what a run measured, judged and was configured with; reports and rejudge read it.

    schema.py   RunRecord (run.json, ``kvgate.run/2``), JudgementRecord (a checks.jsonl line,
                with the measurements the check was judged on: InputsRecord, to and from
                a Judgement's Inputs), ArtifactRecord (the evidence index)
    gate_rows.py  what each gate keeps for its report (``g2_rows``, ``g3_rows``, ``g4_rows``);
                rows stored as cells by older runs read as ``*CellRow``
    launches.py the engines a run started (``engines``) and its detached soaks (``g4_jobs``)
    environment.py  G1's manifest and tool versions per host, the waivers in force
    migrate.py  reads a ``kvgate.run/1`` run.json as a ``kvgate.run/2`` record
    store.py    RunStore: one directory per gate run, written as the run goes (its one writer)
    run_files.py  what a run directory's files must hold when read back (report, --resume)
    manifest.py the run's manifest: what it wrote, hashed at its end, verified when read again
    gate_order.py  the four gates, their order and where their pytest suites live

The run directory is the record: run.json (configuration, status, gate tables), checks.jsonl
(judgements, appended as they happen so a crash keeps them), facts/ and artifacts/ (the
evidence, indexed with hashes). ``kvgate.record.store.RunStore`` is its one writer.
"""

from kvgate.record.environment import WaiverRecord
from kvgate.record.gate_order import GATES, PREFLIGHT, gate_dir, no_checks, require_previous
from kvgate.record.gate_rows import (
    ArmFigures,
    DeploymentFacts,
    G2Figures,
    G2Row,
    G2Stored,
    G3CellRow,
    G3Figures,
    G3StorageRow,
    G3Stored,
    G4Row,
    G4Stored,
    PredictionRow,
    ServingLevel,
    SoakFacts,
    SoakFigures,
    StorageFigures,
    StorageVolumes,
    SweepCell,
    VerdictRow,
    VolumeFigures,
)
from kvgate.record.launches import AgentJob, EngineLaunch, G4Job, SoakEngine
from kvgate.record.manifest import Verification, sign_manifest, verify_manifest, write_manifest
from kvgate.record.migrate import migrate
from kvgate.record.run_files import parse_json, read_text
from kvgate.record.schema import (
    SCHEMA,
    SCHEMA_V1,
    ArtifactRecord,
    Forced,
    InputsRecord,
    JudgementRecord,
    RunRecord,
    Section,
    measurements_from_record,
    measurements_to_record,
)
from kvgate.record.store import RunStore, outcome, utc_now

__all__ = [
    "GATES",
    "PREFLIGHT",
    "SCHEMA",
    "SCHEMA_V1",
    "AgentJob",
    "ArmFigures",
    "ArtifactRecord",
    "DeploymentFacts",
    "EngineLaunch",
    "Forced",
    "G2Figures",
    "G2Row",
    "G2Stored",
    "G3CellRow",
    "G3Figures",
    "G3StorageRow",
    "G3Stored",
    "G4Job",
    "G4Row",
    "G4Stored",
    "InputsRecord",
    "JudgementRecord",
    "PredictionRow",
    "RunRecord",
    "RunStore",
    "Section",
    "ServingLevel",
    "SoakEngine",
    "SoakFacts",
    "SoakFigures",
    "StorageFigures",
    "StorageVolumes",
    "SweepCell",
    "VerdictRow",
    "Verification",
    "VolumeFigures",
    "WaiverRecord",
    "gate_dir",
    "measurements_from_record",
    "measurements_to_record",
    "migrate",
    "no_checks",
    "outcome",
    "parse_json",
    "read_text",
    "require_previous",
    "sign_manifest",
    "utc_now",
    "verify_manifest",
    "write_manifest",
]
