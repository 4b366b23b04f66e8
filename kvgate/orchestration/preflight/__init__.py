"""``kvgate preflight``: in minutes, whether this lab can be measured, before hours of gates.

Per host: SSH, sudo where the inventory says so, the agent's Python; per volume: the
counter sanity probe (an O_DIRECT read must move the counters that stand for the
volume) and, on NFS, the mount's options; per engine deployment: the engine starts, its
/metrics exposes the counters its profile names, the gate profile can count its tokens,
and one prompt goes through its tier cycle (populate, make cold the profile's way,
restore) with hits, device and engine bytes all moving — G3's own tier probe; then every
other engine G3 will start for it (recompute, R1's readers, the capacity and volume arms:
each distinct launch once, kvgate.orchestration.g3.launches) until it answers, a start that
fails is FAIL with the engine log's last lines. Every other check that fails is INVALID
with the reason (a gate would be INVALID by construction), a lab failure is ERROR. It is
recorded like a gate run (results/<site>/preflight-*).

    plan.py      the inventory → PreflightCheck: what is probed on which host, what each must show
    nfs_reads.py the cold reads the gates plan on an NFS volume, and which its server control leaves warm
    measure.py   one host's probes → Measurements by check key (a lab failure kept as its LabError)
    fixtures.py  every host at once, its probes in turn (pytest fixtures of gates/preflight/)
"""

from __future__ import annotations

from kvgate.orchestration.preflight.plan import plan

__all__ = ["plan"]
