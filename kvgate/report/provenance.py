"""Beside a headline figure: the deployment, model and load that produced it, its spread, its caveats.

Read from what G3 recorded: the gate profile's binding of the check (its arms and concurrency),
the engines each arm ran on (``engines``: profile, command line, whether it batches), and the
arms' figures (``g3_rows``: each arm's TTFT CV per level). A reference row then reads
"tiny-llama on localhost: llama-cpp-ram (dram-only) vs llama-cpp-disk-keep (ssd-tier), model
tiny.gguf; sessions at c4/c8/c16 … — queued: the engine serves one request at a time" instead
of the seed's own setup.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from kvgate.configuration.gate_profiles import G3Profile, VerdictBinding
from kvgate.configuration.reference_schema import Reference
from kvgate.configuration.references import show_bound
from kvgate.record import EngineLaunch, G3Figures
from kvgate.report.model import CheckRow, RunView
from kvgate.report.numbers import human


@dataclass(frozen=True)
class Provenance:
    """What produced one headline figure, said beside it."""

    produced: str  # deployment, arms (engine profiles), model and load
    spread: str = ""  # the candidate arm's TTFT CV at each level measured
    caveats: str = ""  # the section that says what the engine cannot show (an anchor)


def deployment_of(check: str) -> str:
    """'engine[tiny-llama].ttft-p50-reduction' → 'tiny-llama'."""
    head = check.split(".", maxsplit=1)[0]
    return head[head.find("[") + 1 : -1] if head.endswith("]") else head


def model_of(launch: EngineLaunch) -> str:
    """The model file an engine served (``--model PATH``, ``--model=PATH`` or ``serve PATH``), by its name."""
    argv = launch.argv
    for i, word in enumerate(argv[:-1]):
        if word in ("--model", "serve"):  # not -m: python -m names the server module
            return PurePosixPath(argv[i + 1]).name
    found = [w.partition("=")[2] for w in argv if w.startswith("--model=")]
    return PurePosixPath(found[0]).name if found else ""


def binding_of(view: RunView, row: CheckRow) -> VerdictBinding | None:
    profile = view.record.configuration.gate_profile
    if not isinstance(profile, G3Profile):
        return None
    key = row.check.rpartition(".")[2]
    return next((b for b in profile.verdicts if b.check == key), None)


def levels(b: VerdictBinding) -> tuple[str, ...]:
    """The arm keys' level suffixes this binding reads: ('c4', 'c8', 'c16'), ('whole',) or ()."""
    if b.concurrency == "whole-machine":
        return ("whole",)
    if isinstance(b.concurrency, int):
        return (f"c{b.concurrency}",)
    return tuple(f"c{c}" for c in b.levels) if b.levels else ()


def load_text(b: VerdictBinding, profile: G3Profile, launches: Mapping[str, EngineLaunch]) -> str:
    """'sessions at c4/c8/c16 over 16 shared documents, 87.5 % of each turn reused; queued: …'."""
    at = "at " + "/".join(levels(b)) if levels(b) else "one prompt per trial"
    if b.concurrency == "whole-machine":
        at = "on all engine instances of the host"
    cap = profile.capacity
    text = f"load {at}" if levels(b) else at
    if b.capacity and cap is not None:
        reused = f"{cap.reuse * 100:g} % of each turn reused"
        text = f"sessions {at} over {cap.documents} shared documents, {reused}"
    if any(not e.serves_concurrently for e in launches.values()):
        text += " — queued: the engine serves one request at a time, so the load measures queueing"
    return text


def spread(b: VerdictBinding, figures: G3Figures | None) -> str:
    """'TTFT CV 12 % · 30 % · 76 % at c4 · c8 · c16 over 3 loads each (ssd-tier)': the candidate arm's
    repeatability and how many trials its figures rest on (a p99 of 5 is their largest)."""
    if figures is None:
        return ""
    keys = [(lv, f"{b.candidate_arm}@{lv}") for lv in levels(b)] or [("", b.candidate_arm)]
    found = [(lv, figures.arms[k]) for lv, k in keys if k in figures.arms]
    cvs = [(lv, a.ttft_cv, a.trials) for lv, a in found if a.ttft_cv is not None]
    if not cvs:
        return ""
    at = f" at {' · '.join(lv for lv, _, _ in cvs)}" if cvs[0][0] else ""
    counts = sorted({n for _, _, n in cvs})
    word = "load" if levels(b) else "trial"
    each = " each" if len(cvs) > 1 else ""
    n = (
        f"{counts[0]} {word}{'s' if counts[0] != 1 else ''}{each}"
        if len(counts) == 1
        else (f"{' · '.join(str(n) for _, _, n in cvs)} {word}s")
    )
    return f"TTFT CV {' · '.join(human(cv, 'ratio') for _, cv, _ in cvs)}{at} over {n} ({b.candidate_arm})"


def provenance(view: RunView, row: CheckRow, caveats: str = "") -> Provenance | None:
    """What produced a G3 reference row; None for a check no deployment of the profile produced."""
    b, profile = binding_of(view, row), view.record.configuration.gate_profile
    if b is None or not isinstance(profile, G3Profile):
        return None
    dep = deployment_of(row.check)
    launches = view.record.engines.get(f"{row.host}/{dep}", {})
    arms = " vs ".join(
        f"{launches[a].profile} ({a})" if a in launches else a for a in (b.baseline_arm, b.candidate_arm)
    )
    models = sorted({m for e in launches.values() if (m := model_of(e))})
    model = f", model {', '.join(models)}" if models else ""
    produced = f"{dep} on {row.host}: {arms}{model}; {load_text(b, profile, launches)}"
    figures = view.g3_figures().get(f"{row.host}/{dep}")
    return Provenance(produced, spread(b, figures if isinstance(figures, G3Figures) else None), caveats)


def threshold_said(ref: Reference, expected: object) -> str:
    """Why the site threshold shown differs from the reference's lower end, or '' when it does not."""
    if not isinstance(expected, int | float) or isinstance(expected, bool):
        return ""
    kind, low = ref.improvement.kind, ref.improvement.low
    read = low - ref.improvement.half_units()[0]
    floor, stated = show_bound(kind, float(expected)), show_bound(kind, low)
    if abs(float(expected) - low) < 1e-9:
        return ""
    if abs(float(expected) - read) < 1e-9:
        return f"{stated} read as the seed writes it: met from {floor}"
    return f"{float(expected) / read:.3g} × {stated} (the gate profile's threshold_fraction)"
