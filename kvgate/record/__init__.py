"""The typed run record: what a run measured, judged and was configured with; reports and rejudge read it.

    schema.py   RunRecord (run.json, ``kvgate.run/2``), JudgementRecord (a checks.jsonl line,
                with the measurements the check was judged on), ArtifactRecord (the evidence index)
    migrate.py  reads a ``kvgate.run/1`` run.json as a ``kvgate.run/2`` record
    inputs.py   a Judgement's Inputs to and from the record

The run directory is the record: run.json (configuration, status, gate tables), checks.jsonl
(judgements, appended as they happen so a crash keeps them), facts/ and artifacts/ (the
evidence, indexed with hashes). ``kvgate.store.RunStore`` is its one writer.
"""

from kvgate.record.inputs import inputs_from_record, inputs_to_record
from kvgate.record.migrate import migrate
from kvgate.record.schema import SCHEMA, SCHEMA_V1, ArtifactRecord, JudgementRecord, RunRecord

__all__ = [
    "SCHEMA",
    "SCHEMA_V1",
    "ArtifactRecord",
    "JudgementRecord",
    "RunRecord",
    "inputs_from_record",
    "inputs_to_record",
    "migrate",
]
