"""A stored run loaded into the typed view that the report templates and JUnit render.

Reads only the run directory (run.json, checks.jsonl, facts/, artifacts/index.jsonl);
never runs a command or opens a connection, so a run can be re-rendered offline.

Usage::

    view = load_run(Path("results/lab-a/g1-20260101T000000Z"))
    view.verdict, view.complete, view.missing
    # → (<Verdict.FAIL: 'FAIL'>, True, ())
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from kvgate.base.criteria import Verdict, symbol
from kvgate.configuration.reference_schema import Reference
from kvgate.configuration.waivers import Waivers
from kvgate.judgement import GateVerdict
from kvgate.record import (
    PREFLIGHT,
    Contradiction,
    DriftFigure,
    Forced,
    G3Figures,
    JudgementRecord,
    RunRecord,
    RunStore,
    Section,
    SoakFigures,
    StorageFigures,
    Verification,
    host_outcomes,
    judged_outcome,
    verify_manifest,
)
from kvgate.report.gate_tables import stored_sections
from kvgate.report.history.entry import HistoryEntry, RunFigure, run_id_of
from kvgate.report.numbers import cited, duration, human, humanize_text, plain
from kvgate.report.parts import Artifact, artifacts, as_text, flat_table, sections

INCOMPLETE_STATUSES = ("running", "interrupted", "incomplete")
NOT_EVALUATED = "NOT EVALUATED"
FLAGGED = ("FAIL", "INVALID", "ERROR", NOT_EVALUATED)
# Display order of verdict columns in the summary tables.
LABELS = ("PASS", "FAIL", "INVALID", "ERROR", "WAIVED", "SKIP", NOT_EVALUATED)


@dataclass(frozen=True)
class CheckRow:
    """One check as the report shows it; ``verdict`` None means planned but not evaluated."""

    id: str
    host: str
    check: str
    verdict: Verdict | None
    condition: str = ""
    rule: str = ""
    expected: str = "—"
    measured: str = "—"
    source: str = ""
    evidence: tuple[str, ...] = ()
    waiver: dict[str, str] | None = None
    duration_s: float = 0.0
    metric: str = ""
    comparator: str = ""
    unit: str = ""
    expected_value: object = None  # raw, as recorded (the report shows expected/measured texts)
    measured_value: object = None
    said: tuple[str, ...] = ()  # shown beside any verdict (Inputs.said): "of 44 outputs compared: …"

    @property
    def label(self) -> str:
        return NOT_EVALUATED if self.verdict is None else self.verdict.value

    @property
    def flagged(self) -> bool:
        return self.label in FLAGGED


@dataclass(frozen=True)
class HostSummary:
    host: str
    outcome: GateVerdict  # the gate-verdict rule over this host's checks, as over the gate's: the same words
    counts: dict[str, int]
    roles: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunView:
    """Everything the report says about one run, read from its directory."""

    run_dir: Path
    record: RunRecord  # run.json, typed (kvgate.record.RunRecord)
    outcome: GateVerdict  # the gate's verdict with its coverage, as the store's outcome says it
    status: str  # "complete" | "incomplete"
    incomplete_reason: str
    counts: dict[str, int]
    hosts: tuple[HostSummary, ...]
    rows: dict[str, tuple[CheckRow, ...]]  # host → rows in record order
    missing: tuple[str, ...]
    manifest: dict[str, list[tuple[str, str]]]
    tool_versions: dict[str, list[tuple[str, str]]]
    artifacts: tuple[Artifact, ...]
    sections: tuple[Section, ...]
    facts_files: tuple[str, ...]
    integrity: Verification  # the run record against its manifest (kvgate.record.manifest), and its signer

    @property
    def verdict(self) -> Verdict:
        return self.outcome.verdict

    @property
    def gate(self) -> str:
        return self.record.gate

    @property
    def title(self) -> str:
        """'kvgate G3 acceptance report'; preflight is a readiness check, accepting nothing."""
        kind = "readiness check" if self.gate == PREFLIGHT else "acceptance report"
        return f"kvgate {self.gate.upper()} {kind}"

    @property
    def site(self) -> str:
        return self.record.site

    @property
    def held_and_not_judged(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """Each kind of check once (``canary``, ``nvme-wear``): held everywhere, held where it was judged
        on some engines only (``cache-capacity (tiny-llama)``), and judged nowhere — so a passing gate
        names what it did not judge."""
        by_name: dict[str, set[Verdict | None]] = {}
        passed: dict[str, list[str]] = {}  # kind → the subjects (engines, volumes) where it passed
        for row in (r for rs in self.rows.values() for r in rs):
            subject, _, name = row.check.rpartition("].")
            by_name.setdefault(name or row.check, set()).add(row.verdict)
            if row.verdict is Verdict.PASS:
                passed.setdefault(name or row.check, []).append(subject.partition("[")[2] or row.host)
        held = tuple(n for n, v in by_name.items() if v == {Verdict.PASS})
        partly = tuple(
            f"{n} ({', '.join(dict.fromkeys(passed[n]))})"
            for n, v in by_name.items()
            if Verdict.PASS in v and v != {Verdict.PASS}
        )
        nowhere = tuple(n for n, v in by_name.items() if Verdict.PASS not in v)
        return held, partly, nowhere

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def all_rows(self) -> list[CheckRow]:
        return [r for rows in self.rows.values() for r in rows]

    @property
    def waived(self) -> list[CheckRow]:
        return [r for r in self.all_rows if r.waiver]

    @property
    def forced(self) -> list[Forced]:
        """Gate-order overrides: gate, reason, by, at."""
        return self.record.forced

    @property
    def configured_waivers(self) -> list[dict[str, str]]:
        """The waivers file in force for this run, each saying whether it matched a check of it."""
        in_force = Waivers.model_validate({"waivers": [w.model_dump() for w in self.record.waivers]})
        unmatched = in_force.unmatched(((r.host, r.check, r.rule) for r in self.all_rows), on=self._run_day())
        return [
            {k: as_text(v) for k, v in shown.model_dump(exclude_unset=True).items()}
            | {"matched": "no check of this run (a typo, or expired)" if w in unmatched else "yes"}
            for shown, w in zip(self.record.waivers, in_force.waivers, strict=True)
        ]

    def _run_day(self) -> date | None:
        """The day the run started (a waiver's expiry is judged on it); None when not recorded as a time."""
        try:
            return datetime.fromisoformat(self.record.started_at or "").date()
        except ValueError:
            return None

    def reference(self, rule: str) -> Reference | None:
        """The reference ``rule`` was judged against, as this run recorded it at plan time."""
        return self.record.configuration.bound_references.get(rule)

    @property
    def reference_notes(self) -> list[str]:
        return self.record.reference_notes

    @property
    def resumes(self) -> list[str]:
        return self.record.resumes

    @property
    def labels(self) -> tuple[str, ...]:
        """Verdict columns to show: NOT EVALUATED only when something was not evaluated."""
        return LABELS if self.missing else LABELS[:-1]

    @property
    def smoke(self) -> bool:
        """Run with a smoke profile: it proves the pipeline, so its report offers no acceptance."""
        prof = self.record.configuration.gate_profile
        return prof is not None and "smoke" in prof.name

    @property
    def not_offered(self) -> str:
        """Why this report offers no Accept box, or "" when it does: a smoke run proves the pipeline; a G1
        whose bill of materials orders no NVMe drive and no NVMe-oF subsystem checked a machine, not the
        arrival of an SSD tier (a reader found Accept offered for the demo's own box)."""
        if self.smoke:
            return "a smoke-scale run proves the pipeline end to end, not the storage's performance."
        if self.gate == PREFLIGHT:  # a reader found Accept / Reject boxes under "not an acceptance report"
            return "a readiness check accepts nothing: it says whether the gates can measure this lab."
        if self.gate != "g1":
            return ""
        storage = [r for r in self.all_rows if r.check.split(".")[0] in ("nvme", "nvmeof")]
        if any(r.label != "SKIP" for r in storage):
            return ""
        ordered = "; ".join(sorted({r.condition.rpartition("inventory declares ")[2] for r in storage}))
        return (
            "its bill of materials orders no NVMe drive and no NVMe-oF subsystem"
            + (f" ({ordered})" if ordered else "")
            + ", so G1 proved these hosts match it, not the arrival of an SSD-tier system."
        )

    @property
    def profile_text(self) -> str:
        """The gate profile and what it proves: smoke proves the pipeline, not the storage."""
        prof = self.record.configuration.gate_profile
        name = prof.name if prof is not None else ""
        if prof is None or not name:
            return "not recorded"
        if self.smoke:
            return f"{name}: proves the pipeline end to end, not the storage's performance"
        return f"{name}: {prof.description.strip()[:200]}".rstrip(": ")

    @property
    def duration_text(self) -> str:
        start, end = self.record.started_at, self.record.ended_at
        if not (start and end):
            return "not finished"
        try:
            seconds = (utc(str(end)) - utc(str(start))).total_seconds()
        except (ValueError, TypeError):  # an edited run.json: say what it holds, do not fail the report
            return f"unknown: started_at {str(start)[:40]!r}, ended_at {str(end)[:40]!r} are not UTC times"
        return f"{duration(seconds)} ({start} to {end} UTC)"

    @property
    def fingerprint(self) -> str:
        """Inventory fingerprint and versions in one line."""
        inv, m = self.record.inventory, self.record
        tools = sorted({f"{k} {v}" for kv in self.tool_versions.values() for k, v in kv})
        path, sha = (inv.path, inv.sha256 or "?") if inv else ("?", "?")
        parts = [
            f"inventory {path} sha256 {sha[:12]}",
            f"kvgate {m.kvgate_version or '?'} ({m.git_revision or 'no git revision'})",
            *tools,
        ]
        return " · ".join(parts)

    @property
    def sweeps(self) -> dict[str, dict[str, list[tuple[int, float]]]]:
        """G2's bandwidth sweep per host/volume: block size → [(I/Os in flight, bytes/s)]."""
        out: dict[str, dict[str, list[tuple[int, float]]]] = {}
        for key, row in sorted(self.record.g2_rows.items()):
            for point in row.sweep:
                *bs, parallelism, bw = point
                out.setdefault(str(key), {}).setdefault(str(bs[0]) if bs else "", []).append(
                    (int(parallelism), float(bw))
                )
        return out

    @property
    def knees(self) -> dict[str, tuple[int, str]]:
        """G2's knee per host/volume: (I/Os in flight, block size), as G2 recorded it (no knee: none)."""
        out = {}
        for key, row in self.record.g2_rows.items():
            if row.knee is not None:
                out[key] = (row.knee.parallelism, row.knee.bs)
        return out

    @property
    def contradictions(self) -> list[Contradiction]:
        """Figures of this run that contradict each other, as the gate found them (page 1's box)."""
        return [c for _, found in sorted(self.record.contradictions.items()) for c in found]

    def g3_figures(self) -> dict[str, G3Figures | StorageFigures]:
        """G3's raw numbers beside its tables, per host/subject, for the charts."""
        return {key: row.figures for key, row in sorted(self.record.g3_rows.items())}

    def g4_figures(self) -> dict[str, SoakFigures]:
        """G4's raw numbers beside its tables, per host/deployment."""
        return {key: row.figures for key, row in sorted(self.record.g4_rows.items())}

    def g4_drift(self) -> dict[str, list[DriftFigure]]:
        """G4's drift figures (slopes, fits, projections) per host/deployment, as the gate judged them."""
        return {key: row.drift for key, row in sorted(self.record.g4_rows.items())}

    def history_entry(self) -> HistoryEntry:
        """What kvgate.report.history keeps of this run: identity, verdict and every numeric figure."""
        inv = self.record.inventory
        return HistoryEntry(
            run_id=run_id_of(self.run_dir),
            site=self.site,
            gate=self.gate,
            inventory_sha256=inv.sha256 if inv else "",
            kvgate_version=self.record.kvgate_version,
            verdict=self.outcome.text,
            started_at=self.record.started_at or "",
            status=self.status,
            figures=history_figures(self.all_rows),
        )

    def run_record(self) -> list[tuple[str, str]]:
        """The provenance table: (field, value) in reading order."""
        m, inv = self.record, self.record.inventory
        argv = m.argv
        return [
            ("Gate", self.gate.upper()),
            ("Site", self.site),
            ("Status", f"{self.status} (run.json: {m.status})"),
            ("Started (UTC)", m.started_at or "—"),
            ("Ended (UTC)", m.ended_at or "—"),
            ("kvgate version", m.kvgate_version or "—"),
            ("Git revision", m.git_revision or "—"),
            ("Inventory", (inv.path if inv else "") or "—"),
            ("Inventory sha256", (inv.sha256 if inv else "") or "—"),
            ("Command line", shlex.join(argv) if isinstance(argv, list) else argv or "—"),
            ("Resumed at (UTC)", ", ".join(self.resumes) or "never"),
            ("Run directory", self.run_dir.name),
            ("Schema", m.schema_),
            *self.rejudged_rows(),
        ]

    def rejudged_rows(self) -> list[tuple[str, str]]:
        """What a re-judged run re-judged, and what changed (kvgate rejudge); none for a measured run."""
        done = self.record.rejudged
        if done is None:
            return []
        origin = f"{done.run} ({done.run_schema}, manifest sha256 {done.run_manifest_sha256[:16]})"
        kept = f"{len(done.carried)} verdict(s) kept: nothing stored to judge them again"
        return [
            ("Re-judged from", origin),
            ("Re-judged at (UTC)", f"{done.at} by {done.by or '?'}"),
            ("Changes", "; ".join(done.changes) or "none: the same verdicts"),
            ("Carried", kept if done.carried else "none"),
        ]


BETTER = {">=": "higher", ">": "higher", "<=": "lower", "<": "lower"}
# Proofs that a run's numbers can be trusted, not figures of the system: any value past their
# bound is as good as another, and how far past moves with what else the machine did (a device
# counter also counts other processes' reads). Kept in the history, never a regression.
PROOFS = frozenset(
    {"counters_moved_ratio", "cache_growth_ratio", "restore_read_ratio", "soak_coverage_ratio"}
)


def history_figures(rows: list[CheckRow]) -> tuple[RunFigure, ...]:
    """Numeric measurements with their better direction and the CV their repeats recorded."""
    cv = {(r.host, r.metric.removesuffix("_cv")): r.measured_value for r in rows if r.metric.endswith("_cv")}
    out = []
    for r in rows:
        value = r.measured_value
        if isinstance(value, bool) or not isinstance(value, int | float) or r.metric.endswith("_cv"):
            continue
        noise = cv.get((r.host, r.metric))
        noise = float(noise) if isinstance(noise, int | float) else None
        better = "" if r.metric in PROOFS else BETTER.get(r.comparator, "")
        out.append(RunFigure(r.id, float(value), r.unit, better, noise))
    return tuple(out)


def utc(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def expected_text(rec: JudgementRecord) -> str:
    """'≥ 64 cores (±5%)': the criterion half of the condition string, in SI units."""
    if not rec.comparator:
        return "—"
    tol = f" (±{rec.tolerance:.0%})" if rec.tolerance else ""
    if isinstance(rec.expected, bool) and rec.comparator == "==":  # not 'True = True'
        return f"must be {plain(rec.expected)}"
    if rec.comparator == "matches":
        return f"{pattern_text(str(rec.expected))}{tol}"
    return f"{symbol(rec.comparator)} {shown(rec.expected, rec.unit, rec.metric)}{tol}"


def pattern_text(pattern: str) -> str:
    """A regular expression in words where it is plain text: a signer does not read /^ready in /.

    >>> [pattern_text(p) for p in ("^ready in ", "^KVGLAB-ARRAY$", "EPYC", "^6[.]1")]
    ['begins with “ready in ”', 'is “KVGLAB-ARRAY”', 'contains “EPYC”', 'matches /^6[.]1/']
    """
    head, body, tail = pattern.startswith("^"), pattern.strip("^$"), pattern.endswith("$")
    if not body or re.search(r"[.^$*+?{}\[\]\\|()]", body):
        return f"matches /{pattern}/"
    if head and tail:
        return f"is “{body}”"
    return f"begins with “{body}”" if head else f"ends with “{body}”" if tail else f"contains “{body}”"


def measured_text(rec: JudgementRecord) -> str:
    return "—" if rec.measured is None else shown(rec.measured, rec.unit, rec.metric)


def shown(value: object, unit: str, metric: str) -> str:
    """A recorded value for people: numbers in SI units, lists compact, never a Python literal."""
    if isinstance(value, list | tuple):
        return ", ".join(human(v, unit, metric=metric) for v in value) or "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {human(v)}" for k, v in value.items()) or "none"
    return human(value, unit, metric=metric)


def check_row(rec: JudgementRecord) -> CheckRow:
    return CheckRow(
        id=rec.id,
        host=rec.host,
        check=rec.check,
        verdict=rec.verdict,
        condition=humanize_text(rec.condition),
        rule=rec.rule,
        expected=expected_text(rec),
        measured=measured_text(rec),
        source=cited(rec.source),
        evidence=tuple(rec.evidence),
        waiver=rec.waiver or None,
        duration_s=rec.duration_s,
        metric=rec.metric,
        comparator=rec.comparator,
        unit=rec.unit,
        expected_value=rec.expected,
        measured_value=rec.measured,
        said=tuple(humanize_text(s) for s in rec.inputs.said) if rec.inputs else (),
    )


def missing_row(check_id: str) -> CheckRow:
    host, _, check = check_id.partition("/")
    return CheckRow(
        id=check_id, host=host, check=check, verdict=None, condition="not evaluated (run incomplete)"
    )


def in_plan_order(rows: list[CheckRow], planned: list[str]) -> list[CheckRow]:
    """Rows in the plan's order (the gate's test functions run family by family), unplanned ones last."""
    rank = {cid: i for i, cid in enumerate(planned)}
    return sorted(rows, key=lambda r: rank.get(r.id, len(rank)))


def group_rows(rows: Iterable[CheckRow]) -> dict[str, tuple[CheckRow, ...]]:
    """Host → rows, hosts sorted by name, rows kept in record order."""
    by_host: dict[str, list[CheckRow]] = {}
    for row in rows:
        by_host.setdefault(row.host, []).append(row)
    return {h: tuple(by_host[h]) for h in sorted(by_host)}


def count(rows: Iterable[CheckRow]) -> dict[str, int]:
    counts = dict.fromkeys(LABELS, 0)
    for row in rows:
        counts[row.label] += 1
    return counts


def host_summaries(
    rows: dict[str, tuple[CheckRow, ...]], record: RunRecord, outcomes: dict[str, GateVerdict]
) -> tuple[HostSummary, ...]:
    hosts = record.hosts
    return tuple(
        HostSummary(h, outcomes[h], count(rs), tuple(hosts[h].roles) if h in hosts else ())
        for h, rs in rows.items()
    )


def incompleteness(record: RunRecord, missing: tuple[str, ...]) -> str:
    """Why the run is incomplete; '' when it is complete."""
    reasons = []
    if record.status in INCOMPLETE_STATUSES:
        reasons.append(f"run status is {record.status!r}: the run did not finish")
    if missing:
        reasons.append(f"{len(missing)} of {len(record.planned)} planned checks have no verdict")
    return "; ".join(reasons)


def load_run(run_dir: Path, *, allowed_signers: Path | None = None) -> RunView:
    """Load a run directory; raises StoreError if it is not a readable kvgate run."""
    integrity = verify_manifest(run_dir, allowed_signers=allowed_signers)  # before anything is read from it
    store = RunStore.open(run_dir)
    record = store.run_record()
    stored = store.checks().values()
    recorded = [check_row(rec) for rec in stored]
    done = {r.id for r in recorded}
    missing = tuple(c for c in record.planned if c not in done)
    rows = group_rows(in_plan_order([*recorded, *(missing_row(c) for c in missing)], record.planned))
    reason = incompleteness(record, missing)
    facts_dir = run_dir / "facts"
    return RunView(
        run_dir=run_dir,
        record=record,
        outcome=judged_outcome(record, stored, missing),
        status="incomplete" if reason else "complete",
        incomplete_reason=reason,
        counts=count(r for rs in rows.values() for r in rs),
        hosts=host_summaries(rows, record, host_outcomes(record, stored, missing)),
        rows=rows,
        missing=missing,
        manifest=flat_table({h: m.model_dump(exclude_unset=True) for h, m in record.manifest.items()}),
        tool_versions=flat_table(record.tool_versions),
        artifacts=artifacts(store),
        sections=sections(stored_sections(record, run_dir), run_dir / "run.json"),
        facts_files=tuple(f"facts/{p.name}" for p in sorted(facts_dir.glob("*.json"))),
        integrity=integrity,
    )
