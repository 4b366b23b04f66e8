"""What G4 can judge on a host, found before it runs (preflight): its plan and the host's counters.

It sits above the gates, as gate_plans does, so that preflight's slice imports no other gate's.

G4's plan rules out at plan time what an engine profile cannot show and drift on a soak too
short for an hourly slope; a health check is SKIP at run time on a host without the device or
counter it reads (no local NVMe drive, no NIC counter, no NVMe-oF path). One health snapshot
and a minute of the kernel log, taken now, say which.
"""

from __future__ import annotations

from kvgate.configuration.gateconfig import GateConfig
from kvgate.orchestration.g4 import health_gaps, plan
from kvgate.record import G4Reach
from kvgate.transport import Executor


def reach(ex: Executor, config: GateConfig, host: str) -> dict[str, G4Reach]:
    """Per ``host/deployment`` on this host: G4's checks of it, and why each it will not judge."""
    said = health_gaps(ex, host=host, sudo=config.inventory.inventory.hosts[host].sudo)
    checks: dict[str, list[str]] = {}
    unjudged: dict[str, dict[str, str]] = {}
    for c in plan(config):
        if c.host != host:
            continue
        where = f"{host}/{c.subject}"
        checks.setdefault(where, []).append(c.key)
        why = c.ruled.reason if c.ruled is not None else said.get(c.key)
        if why:
            unjudged.setdefault(where, {})[c.key] = why
    return {w: G4Reach(checks=len(keys), unjudged=unjudged.get(w, {})) for w, keys in checks.items()}
