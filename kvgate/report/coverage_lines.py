"""What page 1 and the sign-off say of a gate's coverage: the references it did not judge, and why.

The counts come from the run's outcome (kvgate.judgement.gate_outcome, through RunView.outcome);
this module only names each reference the way the seed states it and groups them by reason, so
a signer reads "R2 TTFT p50 against recompute … (R2-recompute-ttft-p50-conc16): the engine serves
one request at a time", once per reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kvgate.configuration.reference_schema import Reference
from kvgate.judgement import Coverage
from kvgate.report.g4_extra_tables import one_reason
from kvgate.report.model import RunView


@dataclass(frozen=True)
class Unjudged:
    """References of the gate's profile that no check judged, with the reason they share."""

    reason: str
    references: tuple[str, ...]  # "R2 TTFT p50 … (R2-recompute-ttft-p50-conc16)"


def reference_name(ref: Reference | None, ref_id: str) -> str:
    """'R2 TTFT p50 against recompute … (R2-recompute-ttft-p50-conc16)': the seed's words, then the id."""
    return f"{ref.report} {ref.scenario.en} ({ref_id})" if ref is not None else ref_id


def reason(condition: str) -> str:
    """The why of a check's condition ('metric: not applicable — why' → 'why'); a plan's ruling as it is."""
    return condition.split(" — ", 1)[-1].strip().rstrip(".") or "not evaluated"


def grouped(cover: Coverage, name: Callable[[str], str]) -> tuple[Unjudged, ...]:
    """The references ``cover`` leaves unjudged, named, grouped by reason."""
    groups: dict[str, list[str]] = {}
    for ref_id, why in cover.unjudged.items():
        groups.setdefault(reason(why), []).append(name(ref_id))
    return tuple(Unjudged(why, tuple(names)) for why, names in groups.items())


def unjudged(view: RunView) -> tuple[Unjudged, ...]:
    """The references the gate's profile binds that it did not judge, grouped by reason."""
    return grouped(view.outcome.coverage, lambda r: reference_name(view.reference(r), r))


@dataclass(frozen=True)
class Outlook:
    """Preflight: what G3 can judge with this inventory, from G3's plan (kvgate.judgement.reach)."""

    coverage: Coverage
    unjudged: tuple[Unjudged, ...]
    judged: tuple[str, ...]  # the references G3 can judge, named
    far_above: tuple[str, ...] = ()  # of those, judged only if the figure is not far above the seed's range


def g3_outlook(view: RunView) -> Outlook | None:
    """What a preflight run recorded of G3's plan; None for a gate run (or a preflight before it did)."""
    found = view.record.g3_reach
    if found is None:
        return None
    cover = Coverage(tuple(found.references), dict(found.unjudged))

    def name(ref_id: str) -> str:
        return reference_name(found.references.get(ref_id), ref_id)

    far = tuple(f"{name(r)}: {found.far_above[r]}" for r in cover.judged if r in found.far_above)
    return Outlook(cover, grouped(cover, name), tuple(name(r) for r in cover.judged), far)


@dataclass(frozen=True)
class G4Outlook:
    """Preflight: what G4 can judge on each engine host, from its plan and the host's counters."""

    judged: int
    checks: int
    deployments: int
    unjudged: tuple[tuple[str, str], ...]  # (reason, "host/deployment: key, key; …") by reason


def g4_outlook(view: RunView) -> G4Outlook | None:
    """What a preflight run found of G4's reach (kvgate.orchestration.g4_reach); None when it found none."""
    found = view.record.g4_reach
    if not found:
        return None
    by_reason: dict[str, dict[str, list[str]]] = {}
    for where, r in sorted(found.items()):
        for key, why in r.unjudged.items():
            by_reason.setdefault(one_reason(why), {}).setdefault(where, []).append(key)
    checks = sum(r.checks for r in found.values())
    judged = checks - sum(len(r.unjudged) for r in found.values())
    said = tuple(
        (why, "; ".join(f"{where}: {', '.join(keys)}" for where, keys in places.items()))
        for why, places in by_reason.items()
    )
    return G4Outlook(judged, checks, len(found), said)
