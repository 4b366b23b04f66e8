"""G1 checks on host tuning: /dev/shm size, kernel command-line tokens, NUMA balancing and
the groups of the user kvgate runs as (see kvgate.probes.facts.tuning for the vendor guidance)."""

from __future__ import annotations

import dataclasses
from functools import partial

from kvgate.base.criteria import Criterion, Judgement
from kvgate.base.units import GiB
from kvgate.orchestration.g1 import checks
from kvgate.orchestration.g1.checks import PlanContext, PlannedCheck
from kvgate.probes.facts import Collected


def _shm(check: PlannedCheck, col: Collected) -> Judgement:
    if col.facts.get("shm_bytes") is None:
        return checks.not_reported(check, col, "/dev/shm", missing="/dev/shm size not reported")
    return checks.measure(check, col, round(col.facts["shm_bytes"] / GiB, 1))


def _present(key: str, names: tuple[str, ...], check: PlannedCheck, col: Collected) -> Judgement:
    """Each name in the fact's list (command-line tokens, group names)."""
    found = col.facts.get(key)
    if found is None:
        return checks.not_reported(check, col, key, missing=f"{key} not reported")
    one = dataclasses.replace(
        check, criterion=dataclasses.replace(check.criterion, comparator="==", expected=True)
    )
    parts = [
        checks.measure(one, col, name in found, metric=f"{check.criterion.metric}[{name}]") for name in names
    ]
    who = f"user {col.facts['user']}: " if key == "groups" and col.facts.get("user") else ""
    return checks.with_note(checks.combine(check, parts, "nothing required"), f"{who}{' '.join(found)}")


def _balancing(check: PlannedCheck, col: Collected) -> Judgement:
    if col.facts.get("numa_balancing") is None:
        return checks.not_reported(check, col, "numa_balancing", missing="numa_balancing not reported")
    return checks.measure(check, col, col.facts["numa_balancing"])


def tuning_checks(pc: PlanContext) -> list[PlannedCheck]:
    """What the BOM's `tuning:` asks for, one check per setting."""
    t = pc.expect.tuning
    if t is None:
        return []
    out = []
    if t.min_shm_gib is not None:
        crit = Criterion(
            "G1-TUNE-1", "shm_gib", ">=", t.min_shm_gib, unit="GiB", source=pc.source("tuning", "min_shm_gib")
        )
        out.append(checks.planned(pc, "tuning.shm", "tuning", crit, _shm))
    if t.kernel_cmdline:
        crit = Criterion(
            "G1-TUNE-2", "cmdline", "in", t.kernel_cmdline, source=pc.source("tuning", "kernel_cmdline")
        )
        out.append(
            checks.planned(
                pc, "tuning.cmdline", "tuning", crit, partial(_present, "cmdline", t.kernel_cmdline)
            )
        )
    if t.numa_balancing is not None:
        crit = Criterion(
            "G1-TUNE-3",
            "numa_balancing",
            "==",
            int(t.numa_balancing),
            source=pc.source("tuning", "numa_balancing"),
        )
        out.append(checks.planned(pc, "tuning.numa_balancing", "tuning", crit, _balancing))
    if t.user_groups:
        crit = Criterion(
            "G1-TUNE-4", "user_groups", "in", t.user_groups, source=pc.source("tuning", "user_groups")
        )
        out.append(
            checks.planned(pc, "tuning.groups", "tuning", crit, partial(_present, "groups", t.user_groups))
        )
    return out
