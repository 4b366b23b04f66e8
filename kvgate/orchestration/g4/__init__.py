"""G4 soak: hours (72 at full scale) of mixed load with no errors, no drift, no corruption.

plan.py         per engine deployment and engine host, what the soak must hold (the site's limits,
                ``workloads/g4/<scale>.yaml``); unmeasurable here → SKIP, too short for a trend → INVALID
fixtures.py     every engine host soaked at once (its deployments in turn), then each check judged
soak.py         one deployment on one host: engines started detached, the soak run by the agent,
                each window stored as it arrives; the job recorded first, so ``--resume`` reattaches
outcome.py      a finished soak (its windows, the agent's result, health, integrity) → the measurements
                its checks judge, each stored as evidence first
integrity.py    the integrity load beside the soak (fio crc32c, checkpoints, KV chunks read back): started,
                followed to the soak's end, its failures kept once per place with time and window
health.py       NVMe SMART, NVMe-oF paths and NIC loss counters at the start, every hour and at the end,
                judged as deltas; the kernel log of the soak's window, each line with its time and window
drift.py        RSS, TTFT p99, throughput and the tier against its cap judged as slopes per hour over every
                window after warm-up, a plateau by its tail, with a 95 % interval and a 72-h projection
trends.py       the soak's windows → the numbers G4 judges: errors, drift, memory, capacity, hits,
                canary (pure)
stop.py         ``kvgate stop RUN``: a detached soak ended early (SIGTERM to its agent job)
report_rows.py  what G4 keeps in run.json for its report (``g4_rows``): verdicts and soak, as numbers
"""

from __future__ import annotations

from kvgate.orchestration.g4.health import gaps as health_gaps
from kvgate.orchestration.g4.plan import plan
from kvgate.orchestration.g4.stop import stop_soak

__all__ = [
    "health_gaps",
    "plan",
    "stop_soak",
]
