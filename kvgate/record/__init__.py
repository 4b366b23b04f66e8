"""The typed run record: what a run measured, judged and was configured with; reports and rejudge read it.

    schema.py   RunRecord (run.json, ``kvgate.run/2``), JudgementRecord (a checks.jsonl line,
                with the measurements the check was judged on: InputsRecord, to and from
                a Judgement's Inputs), ArtifactRecord (the evidence index)
    gate_rows.py  what each gate keeps for its report (``g2_rows``, ``g3_rows``, ``g4_rows``);
                figures of a run that contradict each other (``contradictions``)
    launches.py the engines a run started (``engines``) and its detached soaks (``g4_jobs``)
    environment.py  G1's manifest and tool versions per host, the waivers in force
    store.py    RunStore: one directory per gate run, written as the run goes (its one writer);
                outcome / judged_outcome: the run's gate verdict with its coverage (judgement.gate_outcome)
    run_files.py  what a run directory's files must hold when read back (report, --resume)
    manifest.py the run's manifest: what it wrote, hashed at its end, verified when read again;
                ``check_seal`` refuses a modified run before anything reads its figures
    signature.py  the run's signature (ssh-keygen -Y), made and checked without ever prompting
    gate_order.py  the four gates, their order and where their pytest suites live

The run directory is the record: run.json (configuration, status, gate tables), checks.jsonl
(judgements, appended as they happen so a crash keeps them), facts/ and artifacts/ (the
evidence, indexed with hashes). ``kvgate.record.store.RunStore`` is its one writer.
"""

from kvgate.record.environment import WaiverRecord
from kvgate.record.gate_order import GATES, PREFLIGHT, gate_dir, no_checks, require_previous
from kvgate.record.gate_rows import (
    SERVING_KEYS,
    ArmFigures,
    Contradiction,
    DeploymentFacts,
    DriftFigure,
    Figure,
    G2Figures,
    G2Row,
    G3DeploymentRow,
    G3Figures,
    G3StorageRow,
    G3Stored,
    G4Row,
    HealthFigures,
    IntegrityFailure,
    IntegrityFigures,
    KernelLine,
    PredictionRow,
    ServingLevel,
    SoakFacts,
    SoakFigures,
    StorageFigures,
    SweepCell,
    VerdictRow,
    VolumeFigures,
    arm_order,
    held_little,
)
from kvgate.record.launches import AgentJob, EngineLaunch, G4Job, SoakEngine
from kvgate.record.manifest import Verification, check_seal, sign_manifest, verify_manifest, write_manifest
from kvgate.record.run_files import MAX_RUN_FILE_BYTES, read_text
from kvgate.record.schema import (
    Forced,
    G4Reach,
    JudgementRecord,
    RunRecord,
    Section,
    measurements_to_record,
)
from kvgate.record.store import (
    RunStore,
    git_revision,
    host_outcomes,
    judged_outcome,
    outcome,
    utc_now,
)

__all__ = [
    "GATES",
    "MAX_RUN_FILE_BYTES",
    "PREFLIGHT",
    "SERVING_KEYS",
    "AgentJob",
    "ArmFigures",
    "Contradiction",
    "DeploymentFacts",
    "DriftFigure",
    "EngineLaunch",
    "Figure",
    "Forced",
    "G2Figures",
    "G2Row",
    "G3DeploymentRow",
    "G3Figures",
    "G3StorageRow",
    "G3Stored",
    "G4Job",
    "G4Reach",
    "G4Row",
    "HealthFigures",
    "IntegrityFailure",
    "IntegrityFigures",
    "JudgementRecord",
    "KernelLine",
    "PredictionRow",
    "RunRecord",
    "RunStore",
    "Section",
    "ServingLevel",
    "SoakEngine",
    "SoakFacts",
    "SoakFigures",
    "StorageFigures",
    "SweepCell",
    "VerdictRow",
    "Verification",
    "VolumeFigures",
    "WaiverRecord",
    "arm_order",
    "check_seal",
    "gate_dir",
    "git_revision",
    "held_little",
    "host_outcomes",
    "judged_outcome",
    "measurements_to_record",
    "no_checks",
    "outcome",
    "read_text",
    "require_previous",
    "sign_manifest",
    "utc_now",
    "verify_manifest",
    "write_manifest",
]
