"""Read a ``kvgate.run/1`` run.json as a ``kvgate.run/2`` record (a run made before the typed record).

v1 wrote the same keys, untyped; v2 adds ``configuration`` and ``rejudged`` and declares every
key. A v1 run keeps the sections it rendered at measurement time (``sections``); its
checks.jsonl lines have no ``inputs`` (rejudge judges their stored value again).

>>> migrate({"schema": "kvgate.run/1", "gate": "g1", "site": "s", "status": "complete"})["schema"]
'kvgate.run/2'
"""

from __future__ import annotations

from typing import Any

from kvgate.record.schema import SCHEMA, SCHEMA_V1


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """run.json's content in the current schema; a v2 document is returned as it is."""
    if data.get("schema") != SCHEMA_V1:
        return data
    out = dict(data) | {"schema": SCHEMA}
    out["reference_notes"] = [str(n) for n in data.get("reference_notes") or []]
    profile = out.pop("g3_profile", None) or out.pop("g4_profile", None)  # v1: under the gate's name
    out["configuration"] = {"gate_profile": profile} if isinstance(profile, dict) else {}
    return out
