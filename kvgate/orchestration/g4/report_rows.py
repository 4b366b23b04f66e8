"""What G4 keeps in run.json for its report (``g4_rows``): each deployment's verdicts and soak, as numbers.

Rows are kept per host/deployment, so a resumed run adds to the earlier ones. The soak's
windows are its artifact (``artifacts/<host>/g4/<deployment>/windows.jsonl``); the report
lays out the windows table, the slopes and the verdicts when it is rendered
(kvgate.report.g4_tables), so a better formatter changes every stored run's tables.
"""

from __future__ import annotations

from typing import Any

from kvgate.orchestration.g4.outcome import SoakResult
from kvgate.orchestration.g4.plan import G4Check
from kvgate.orchestration.verdict_rows import verdict_row


def rows(r: SoakResult, checks: list[G4Check]) -> dict[str, Any]:
    """Everything the G4 tables show for one deployment on one host, beside its stored windows."""
    judged = [(c, c.evaluate(r.inputs(c.key))) for c in checks]
    return {
        "verdicts": [verdict_row(c, j) for c, j in judged],
        "soak": {
            "ended": r.soak.ended,
            "near_ties": r.near_ties,
            "tier": r.tier.name,
            "model": r.model,
            "serves_concurrently": r.tier.serves_concurrently,
        },
        # for the report's charts: the tiers' summed capacity (the windows are in windows.jsonl)
        "figures": {"cap_bytes": r.soak.cap_bytes},
        "integrity": r.integrity,
        "drift": r.drift,
        "health": r.health,
    }
