"""What page 1 and the findings say: headline figures, scope, findings first, baselines apart.

Everything here is derived from a RunView (kvgate.report.model), the report's only view
of the run, with how the seed stated each reference as the run recorded it (RunView.reference).

Usage::

    s = summarize(load_run(Path("results/lab-a/g3-20260101T000000Z")))
    [h.text for h in s.headline]
    # → ['TTFT p50 ↓41 % vs recompute — reference R2 ↓26–32 %: above the range', …]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from kvgate.configuration.reference_schema import Kind, Reference
from kvgate.configuration.references import seed_position, show_bound
from kvgate.report.model import CheckRow, RunView
from kvgate.report.numbers import human, margin
from kvgate.report.restore_evidence import restore_vs_g2
from kvgate.report.scope_lines import profile_lines

REFERENCE_RULE = re.compile(r"^R\d")
# Where a check carries no specification, only the site's own figure (G2 "> 0 B/s").
RECORDED = "no site threshold"
# G2's headline figures (its checks' metrics end with these), in reading order.
G2_HEADLINE = {
    "seqread-1m.read_bw_bytes_per_s": "sequential read (1 MiB blocks)",
    "seqwrite-1m.write_bw_bytes_per_s": "sequential write (1 MiB blocks)",
    "randread-4k.read_iops": "random read (4 KiB blocks)",
    "randread-4k.read_clat_p99_ns": "random read latency p99",
    "kv_restore.parallel.read_bw_bytes_per_s": "KV restore, parallel readers",
    "model_load.parallel.read_bw_bytes_per_s": "model load, parallel",
    "checkpoint.write_bw_bytes_per_s": "checkpoint write",
}
NEXT_STEP = {
    "FAIL": "fix what the measurement shows, or have the owner of the specification waive it (--waivers)",
    "INVALID": "make the precondition hold (see the condition) and run the gate again",
    "ERROR": "restore the lab (reachability, tools, engine) and finish the run with --resume",
    "NOT EVALUATED": "finish the run with --resume",
}


@dataclass(frozen=True)
class Headline:
    """One figure on page 1: what was measured, against what, and whether it can be trusted."""

    where: str
    what: str
    measured: str
    against: str  # the reference as the seed wrote it, or the site's threshold
    position: str  # inside / above / below the range; the margin to a threshold
    evidence: str  # "cold proven", "INVALID: …", "recorded baseline"
    verdict: str
    note: str = ""  # comparability: where the site's setup differs from the reference's

    @property
    def text(self) -> str:
        return f"{self.what} {self.measured} — {self.against}: {self.position}"


@dataclass(frozen=True)
class Finding:
    row: CheckRow  # the first check with this cause
    sentence: str
    next_step: str
    same: tuple[str, ...] = ()  # the other checks with the same verdict and condition


@dataclass(frozen=True)
class Summary:
    headline: tuple[Headline, ...]
    scope: tuple[tuple[str, str], ...]
    findings: tuple[Finding, ...]
    skips: tuple[tuple[str, tuple[str, ...]], ...]  # reason → check ids
    passes: tuple[tuple[str, tuple[PassRow, ...]], ...]  # family → rows, identical hosts merged
    baselines: tuple[CheckRow, ...]
    fingerprint: str
    counts: tuple[tuple[str, int], ...]
    conditions: dict[str, str] = field(default_factory=dict)  # check id → condition as shown once
    environment: tuple[tuple[str, str, str], ...] = ()  # item, value, hosts
    tools: tuple[tuple[str, str, str], ...] = ()
    comparability: tuple[str, ...] = field(default=())


def is_reference(row: CheckRow) -> bool:
    return bool(REFERENCE_RULE.match(row.rule))


def is_recorded(row: CheckRow) -> bool:
    """A metric with no threshold: a recorded baseline, never a PASS of a specification."""
    trivial = row.comparator in (">", ">=") and row.expected_value in (0, 0.0)
    return RECORDED in row.source or (trivial and row.unit not in ("", "hosts"))


def stated_measured(ref: Reference, value: object) -> str:
    """The measured improvement written the way the seed writes its own (↓41 %, +29 %, 2.3×)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "not measured"
    if ref.improvement.kind is Kind.RATIO:
        return f"{human(float(value))}×"
    signs = ("+", "−") if ref.improvement.kind is Kind.PERCENT_GAIN else ("↓", "↑")
    return f"{signs[value < 0]}{human(abs(float(value)))} %"


# G3's evidence checks on the cache-served arms of a deployment (g3.plan): rule → what it proves.
EVIDENCE_RULES = {
    "G3-KV-1": "written through",
    "G3-KV-2": "cold proven",
    "G3-KV-4": "hits counted",
    "G3-KV-3": "outputs compared",
}


def evidence_checklist(row: CheckRow, rows: Iterable[CheckRow]) -> str:
    """'cold proven ✓ · outputs compared ✓ …': the deployment's evidence checks beside its figure."""
    prefix = row.check.split(".")[0]
    found = {r.rule: r.label for r in rows if r.host == row.host and r.check.split(".")[0] == prefix}
    marks = {"PASS": "✓", "WAIVED": "waived", "SKIP": "n/a"}
    items = [
        f"{what} {marks.get(found[rule], '✗ ' + found[rule])}"
        for rule, what in EVIDENCE_RULES.items()
        if rule in found
    ]
    return " · ".join(items)


def evidence_of(row: CheckRow) -> str:
    if row.label in ("PASS", "FAIL"):
        return ""
    if row.label in ("INVALID", "ERROR", "NOT EVALUATED"):
        return f"{row.label}: {row.condition.split(' — ')[-1][:160]}"
    return row.label


def reference_headline(
    row: CheckRow, ref: Reference, rows: Iterable[CheckRow] = (), *, restore: str = ""
) -> Headline:
    """``restore``: the restore's bandwidth beside G2's on the volume (kvgate.report.restore_evidence)."""
    value = row.measured_value
    position = (
        seed_position(ref, float(value))
        if isinstance(value, int | float) and not isinstance(value, bool)
        else "not evaluable"
    )
    floor = show_bound(ref.improvement.kind, float(row.expected_value or 0))  # type: ignore[arg-type]
    return Headline(
        where=row.host,
        what=f"{ref.report} {ref.scenario.en}",
        measured=stated_measured(ref, value),
        against=f"reference {ref.report} {ref.improvement.stated} (site threshold ≥ {floor})",
        position=position.replace("the seed's ", "").split(": was")[0],
        evidence="; ".join(
            e for e in (evidence_checklist(row, rows), restore, evidence_of(row)) if e and e != "measured"
        ),
        verdict=row.label,
        note=comparability(ref),
    )


def comparability(ref: Reference) -> str:
    """Where the reference was measured: the site's setup must be read against it."""
    p = ref.platform
    conc = f", concurrency {ref.concurrency}" if isinstance(ref.concurrency, int) else ""
    model = f"{ref.model} model" if ref.model else "the seed's model"
    return f"{ref.report} was measured with {model} on {p.accelerator} and {p.storage}{conc}"


def threshold_headline(row: CheckRow, what: str = "") -> Headline:
    recorded = is_recorded(row)
    volume = row.check.split(".")[0] if row.check.startswith("volume[") else ""
    return Headline(
        where=f"{row.host} {volume}".strip(),
        what=what or row.check,
        measured=row.measured,
        against="no specification: the site's recorded baseline" if recorded else f"{row.expected}",
        position="" if recorded else margin(row.measured_value, row.expected_value, row.comparator),
        evidence="" if recorded else evidence_of(row),
        verdict="RECORDED" if recorded and row.label == "PASS" else row.label,
    )


def headline(view: RunView) -> tuple[Headline, ...]:
    rows = view.all_rows
    refs = [(r, ref) for r in rows if is_reference(r) and (ref := view.reference(r.rule)) is not None]
    out = [
        reference_headline(r, ref, rows, restore=restore_vs_g2(view, r))
        for r, ref in refs
        if r.label != "SKIP"
    ]
    if view.gate == "g2":
        out += [
            threshold_headline(r, t) for m, t in G2_HEADLINE.items() for r in rows if r.metric.endswith(m)
        ]
    elif view.gate == "g4":
        out += [
            threshold_headline(r)
            for r in rows
            if r.comparator and r.rule.startswith("G4-") and r.label != "SKIP"
        ]
    elif view.gate == "g1":
        out += [family_headline(host, fam, rs) for (host, fam), rs in families(rows).items()]
    return tuple(out)


def families(rows: Iterable[CheckRow]) -> dict[tuple[str, str], list[CheckRow]]:
    """BOM family → its checks on every host (one line for a cluster, not one per host)."""
    out: dict[tuple[str, str], list[CheckRow]] = {}
    for r in rows:
        out.setdefault(("", r.check.split(".")[0]), []).append(r)
    return out


def family_headline(_host: str, family: str, rows: list[CheckRow]) -> Headline:
    """G1: one line per BOM family — how many items are as ordered, on how many hosts."""
    ok = [r for r in rows if r.label in ("PASS", "WAIVED")]
    judged = [r for r in rows if r.label != "SKIP"]
    worst = next((r.label for r in rows if r.flagged), "PASS" if judged else "SKIP")
    hosts = sorted({r.host for r in rows})
    return Headline(
        where=hosts[0] if len(hosts) == 1 else f"{len(hosts)} hosts",
        what=family,
        measured=f"{len(ok)} of {len(judged)} as ordered" if judged else "not applicable",
        against="the bill of materials (inventory expect)",
        position="",
        evidence="",
        verdict=worst,
    )


def counts(view: RunView, baselines: int) -> tuple[tuple[str, int], ...]:
    """The verdict counts with recorded baselines taken out of PASS."""
    out = [(label, view.counts[label]) for label in view.labels]
    out = [(k, n - baselines if k == "PASS" else n) for k, n in out]
    return tuple((k, n) for k, n in [*out[:1], ("RECORDED", baselines), *out[1:]] if n)


SHORT = 240


def short(text: str, limit: int = SHORT) -> str:
    """``text`` cut at a word boundary near ``limit``; the full text stays in the checks appendix."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + " … (full text in the appendix)"


def sentence(row: CheckRow) -> str:
    """The one sentence a person needs about a flagged check."""
    if row.label == "NOT EVALUATED":
        return f"{row.check} on {row.host} was planned but has no verdict: the run stopped before it."
    if row.label == "ERROR" and row.measured == "—":
        return f"{row.check} on {row.host} could not be evaluated: {short(row.condition)}."
    expected = f"expected {row.expected}" if row.expected != "—" else "no threshold"
    measured = f"measured {row.measured}" if row.measured != "—" else "nothing measured"
    why = f" ({short(row.condition)})" if row.condition else ""
    return f"{row.check} on {row.host}: {expected}, {measured}{why}."


def findings(rows: Iterable[CheckRow]) -> tuple[Finding, ...]:
    """Flagged checks, worst first; checks with one cause (an engine that did not start) as one finding."""
    order = ("FAIL", "INVALID", "ERROR", "NOT EVALUATED")
    causes: dict[tuple[str, str], list[CheckRow]] = {}
    for r in sorted((r for r in rows if r.label in order), key=lambda r: order.index(r.label)):
        cause = cause_of(r)
        causes.setdefault((r.label, cause or r.id), []).append(r)
    return tuple(
        Finding(rs[0], sentence(rs[0]), NEXT_STEP[rs[0].label], tuple(r.id for r in rs[1:]))
        for rs in causes.values()
    )


def cause_of(row: CheckRow) -> str:
    """The condition without the check's own metric prefix: what several checks can share."""
    return row.condition.split(": ", 1)[-1] if len(row.condition) > 80 else ""


def shown_conditions(rows: Iterable[CheckRow]) -> dict[str, str]:
    """Each check's condition, a long one printed once and referred to by later checks."""
    first: dict[str, str] = {}
    out = {}
    for r in rows:
        cause = cause_of(r)
        if cause and cause in first:
            out[r.id] = f"{r.condition.split(': ', 1)[0]}: the same as {first[cause]}"
        else:
            first.setdefault(cause, r.id)
            out[r.id] = r.condition
    return out


def skip_groups(rows: Iterable[CheckRow]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    groups: dict[str, list[str]] = {}
    for r in rows:
        if r.label == "SKIP":
            reason = r.condition.split(": ", 1)[-1] if ": " in r.condition else r.condition
            groups.setdefault(reason or "declared not applicable", []).append(r.id)
    return tuple((k, tuple(v)) for k, v in groups.items())


@dataclass(frozen=True)
class PassRow:
    """PASS checks with the same criterion and measurement, on one or many hosts."""

    row: CheckRow  # the first; the others differ only by host
    hosts: tuple[str, ...]

    @property
    def where(self) -> str:
        """Every host by name: the signed PDF says where each check passed."""
        return ", ".join(self.hosts)


def pass_groups(rows: Iterable[CheckRow]) -> tuple[tuple[str, tuple[PassRow, ...]], ...]:
    """PASS rows by family; identical results on several hosts as one row naming the hosts."""
    groups: dict[str, dict[tuple[str, str, str, str], list[CheckRow]]] = {}
    for r in rows:
        if r.label in ("PASS", "WAIVED") and not is_recorded(r):
            same = (r.check, r.expected, r.measured, r.label)
            groups.setdefault(r.check.split(".")[0], {}).setdefault(same, []).append(r)
    return tuple(
        (family, tuple(PassRow(rs[0], tuple(r.host for r in rs)) for rs in by.values()))
        for family, by in groups.items()
    )


def collapsed(tables: dict[str, list[tuple[str, str]]]) -> tuple[tuple[str, str, str], ...]:
    """{host: [(item, value)]} → (item, value, hosts): one row for the hosts that agree."""
    by: dict[tuple[str, str], list[str]] = {}
    for host, pairs in tables.items():
        for item, value in pairs:
            by.setdefault((item, value), []).append(host)
    total = len(tables)
    return tuple(
        (item, value, f"all {total}" if len(hosts) == total and total > 2 else ", ".join(hosts))
        for (item, value), hosts in sorted(by.items())
    )


def scope(view: RunView) -> tuple[tuple[str, str], ...]:
    rows = view.all_rows
    refs = [r for r in rows if is_reference(r)]
    evaluated = [r for r in refs if r.label in ("PASS", "FAIL", "WAIVED")]
    specified = [r for r in rows if r.comparator and r.label != "SKIP" and not is_recorded(r)]
    out = [
        *profile_lines(view),
        ("Duration", view.duration_text),
        ("Hosts", f"{len(view.hosts)}: " + ", ".join(h.host for h in view.hosts)),
        ("Checks", f"{len(rows)}, of which {len(specified)} evaluated against a specification"),
    ]
    if refs:
        out.append(("Reference checks", f"{len(evaluated)} of {len(refs)} evaluated (PASS or FAIL)"))
    recorded = [r for r in rows if is_recorded(r) and r.label == "PASS"]
    if recorded:
        out.append(
            ("Recorded baselines", f"{len(recorded)}: figures without a threshold, not counted as PASS")
        )
    return tuple(out)


def summarize(view: RunView) -> Summary:
    heads = headline(view)
    rows = view.all_rows
    notes = tuple(dict.fromkeys(h.note for h in heads if h.note))
    baselines = tuple(r for r in rows if is_recorded(r) and r.label == "PASS")
    return Summary(
        headline=heads,
        scope=scope(view),
        findings=findings(rows),
        skips=skip_groups(rows),
        passes=pass_groups(rows),
        baselines=baselines,
        fingerprint=view.fingerprint,
        counts=counts(view, len(baselines)),
        conditions=shown_conditions(rows),
        environment=collapsed(view.manifest),
        tools=collapsed(view.tool_versions),
        comparability=notes,
    )
