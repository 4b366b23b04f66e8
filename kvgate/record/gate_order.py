"""The four gates, their order and where their pytest suites live."""

from __future__ import annotations

from pathlib import Path

from kvgate.base.config_file import repo_root
from kvgate.base.errors import UsageError
from kvgate.record.manifest import check_seal
from kvgate.record.store import RunStore, latest_run, outcome

GATE_DIRS = {"g1": "g1_arrival", "g2": "g2_baseline", "g3": "g3_main", "g4": "g4_soak"}
GATES = tuple(GATE_DIRS)  # in the order they must pass
PREFLIGHT = "preflight"  # recorded like a gate, outside the order: it may run at any time


def gate_dir(gate: str) -> Path:
    if gate == PREFLIGHT:
        return repo_root() / "gates" / PREFLIGHT
    if gate not in GATE_DIRS:
        raise UsageError(f"unknown gate {gate!r}; expected one of {', '.join(GATES)}")
    return repo_root() / "gates" / GATE_DIRS[gate]


# what an inventory must declare for a gate to plan any check (said when it plans none)
NEEDS = {
    "g1": "a host",
    "g2": "a volume mounted on a host (a volume's `hosts:`, or a host with the storage-client role)",
    "g3": "an engine deployment (`engines:`) on a host (its `hosts:`, or a host with the engine role)",
    "g4": "an engine deployment (`engines:`) on a host (its `hosts:`, or a host with the engine role)",
}


def no_checks(gate: str, inventory: str) -> str:
    """Why a gate has nothing to do with an inventory: what it would need."""
    return f"{inventory} plans no {gate} checks: {gate} needs {NEEDS[gate]}"


def previous_gate(gate: str) -> str | None:
    if gate not in GATES:  # preflight
        return None
    i = GATES.index(gate)
    return GATES[i - 1] if i else None


def require_previous(results: Path, *, site: str, gate: str, inventory_sha256: str) -> RunStore | None:
    """The passed previous-gate run for the same inventory; refuses to start the gate without one."""
    prev = previous_gate(gate)
    if prev is None:
        return None
    run = latest_run(results, site, prev, inventory_sha256=inventory_sha256)
    hint = f"run `make {prev}` first, or pass --force-gate-order REASON (recorded as a waiver)"
    if run is None:
        raise UsageError(f"{gate} needs a passed {prev} run for site {site!r} with this inventory; {hint}")
    record = check_seal(run.path, f"{gate}'s gate order")  # before its verdicts are read: exit 2 if edited
    if not record.intact:  # cut before its end, or never a kvgate run: not a passed run
        raise UsageError(
            f"{gate} needs a passed {prev} run; the latest, {run.path}: {record.summary()}; {hint}"
        )
    verdict, missing = outcome(run)  # a G2 that recorded its baseline opens G3 as a PASS does
    if not verdict.gate_ok or missing:
        raise UsageError(f"{gate} needs a passed {prev} run; the latest, {run.path}, is {verdict}; {hint}")
    return run
