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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from kvgate.configuration.reference_schema import Kind, Reference
from kvgate.configuration.references import seed_position, show_bound
from kvgate.judgement import is_baseline
from kvgate.record import G2Row
from kvgate.report.contradictions import BoxLine
from kvgate.report.coverage_lines import G4Outlook, Outlook, Unjudged, g3_outlook, g4_outlook, unjudged
from kvgate.report.g2_tables import against_one_reader, job_elsewhere, same_job_elsewhere
from kvgate.report.g3_tables import ARMS_TITLE
from kvgate.report.model import CheckRow, RunView
from kvgate.report.numbers import DISAGREE_CV, human, margin
from kvgate.report.provenance import Provenance, provenance, threshold_said
from kvgate.report.restore_evidence import restore_vs_g2
from kvgate.report.scope_lines import (
    capacity_arms,
    hits_from_memory,
    profile_lines,
    relaxed_bounds,
    serving_only,
    shared_device,
    soak_shared,
    volume_restores,
)
from kvgate.report.soak_plots import seen_not_judged, slopes_past_limits

REFERENCE_RULE = re.compile(r"^R\d")
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
AGENT_WORKLOADS = ("kv_restore.", "model_load.", "checkpoint.")  # G2's storage workloads, each run once
# G4's headline figures in words, by metric (a check not named here: its key in words).
G4_HEADLINE = {
    "soak_coverage_ratio": "time the soak windows covered over the soak planned (above 1: ran past the plan)",
    "failed_requests": "failed requests",
    "empty_responses": "empty answers (HTTP 200, no token)",
    "engines_died": "engines that died",
    "canary_mismatches": "canary answers that changed",
    "ttft_p50_ratio": "TTFT p50, last windows ÷ first",
    "throughput_retention": "throughput, last windows ÷ first",
    "engine_rss_growth_mib": "engine memory (RSS) growth",
    "cache_peak_ratio": "KV tier's peak size ÷ its capacity",
    "hit_ratio_retention": "cache hit ratio, last windows ÷ first",
    # the integrity load reads back what it wrote itself beside the engines, not the engine's tier files
    "integrity_mismatches": "places where kvgate's own files on the volume read back wrong",
    "integrity_io_errors": "read errors on kvgate's own files on the volume",
    "kernel_log_lines": "kernel log lines about NVMe, RDMA, multipath, I/O errors, hung tasks, OOM",
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
    check_id: str = ""  # the check it shows ('' for a family line): not repeated among the passes
    made: Provenance | None = None  # the deployment, model and load that produced it; spread; caveats
    threshold: str = ""  # why the threshold shown differs from the reference's lower end

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
    # the summary table's columns and each host's counts there, recorded baselines out of PASS
    # (as page 1 counts them): the two never disagree
    columns: tuple[str, ...] = ()
    by_host: dict[str, dict[str, int]] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    conditions: dict[str, str] = field(default_factory=dict)  # check id → condition as shown once
    environment: tuple[tuple[str, str, str], ...] = ()  # item, value, hosts
    tools: tuple[tuple[str, str, str], ...] = ()
    comparability: tuple[str, ...] = field(default=())
    unjudged: tuple[Unjudged, ...] = ()  # the bound references no check judged, by reason
    outlook: Outlook | None = None  # preflight: what G3 can judge with this inventory
    g4_outlook: G4Outlook | None = None  # preflight: what G4 can judge on these hosts
    soak_seen: tuple[str, ...] = ()  # a short soak's trends, first window to last: shown, not judged
    soak_past: tuple[str, ...] = ()  # a short soak's fitted slopes past their limits: not judged either

    @property
    def soak_firm(self) -> tuple[str, ...]:
        """Of those, the slopes whose whole interval lies past the limit (past_limit says "all past it")."""
        return tuple(said for said in self.soak_past if said.endswith("all past it)"))

    versus: tuple[str, ...] = ()  # G2: the candidate's figures beside the baseline's
    serving_only: tuple[str, ...] = ()  # G3/G4: deployments with no KV tier on the storage
    shared_device: str = ""  # G3: the loads, G4: the soak windows another reader shared the device with
    relaxed: tuple[str, ...] = ()  # G2: bounds the inventory loosened past the gate profile's
    unread: tuple[str, ...] = ()  # G1: environment items it could not read (the clock, a NIC's speed)
    volume_restores: tuple[str, ...] = ()  # G3: how fast R2/R3's volume arms restored on each volume
    capacity_arms: tuple[str, ...] = ()  # G3: a DRAM cache that reused little beside its SSD tier
    virtual_disks: tuple[str, ...] = ()  # G2: volumes on a VM's disks, whose hypervisor's cache is unseen
    from_memory: tuple[str, ...] = ()  # G4: tiers whose hits the page cache served, not the storage
    seed_checked: str = ""  # G3: the seed's figures that do not follow from the numbers published with them


def is_reference(row: CheckRow) -> bool:
    return bool(REFERENCE_RULE.match(row.rule))


def is_recorded(row: CheckRow) -> bool:
    """A metric with no threshold: a recorded baseline, never a PASS of a specification."""
    return is_baseline(
        comparator=row.comparator, expected=row.expected_value, unit=row.unit, source=row.source
    )


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
        check_id=row.id,
        where=row.host,
        what=f"{ref.report} {figure_words(ref)}",
        measured=stated_measured(ref, value),
        against=f"reference {ref.report} {ref.improvement.stated} (site threshold ≥ {floor})",
        position=position.replace("the seed's ", "").split(": was")[0],
        evidence="; ".join(
            e for e in (evidence_checklist(row, rows), restore, evidence_of(row)) if e and e != "measured"
        ),
        verdict=row.label,
        note=comparability(ref),
    )


# A reference's figure in words, by its metric (kvgate/configuration: metric names end in their unit).
METRIC_WORDS = {
    "ttft_p50_s": "TTFT p50",
    "ttft_s": "TTFT",
    "throughput_tok_per_s": "throughput",
    "read_bw_gb_per_s": "read bandwidth",
    "write_bw_gb_per_s": "write bandwidth",
    "load_time_s": "model load time",
    "save_time_s": "checkpoint save time",
}
KIND_WORDS = {Kind.RATIO: "speed-up", Kind.PERCENT_GAIN: "gain", Kind.PERCENT_REDUCTION: "reduction"}


def figure_words(ref: Reference) -> str:
    """'TTFT p50 reduction', 'throughput gain': what a reference's improvement is of."""
    metric = METRIC_WORDS.get(ref.metric, ref.metric.replace("_", " "))
    return f"{metric} {KIND_WORDS[ref.improvement.kind]}"


def comparability(ref: Reference) -> str:
    """Where the reference was measured: the site's setup must be read against it."""
    p = ref.platform
    conc = f", concurrency {ref.concurrency}" if isinstance(ref.concurrency, int) else ""
    model = f"{ref.model} model" if ref.model else "the seed's model"
    return (
        f"{ref.report} ({ref.scenario.en}) was measured with {model} on {p.accelerator} and {p.storage}{conc}"
    )


def array_cache(view: RunView) -> str:
    """The array's write cache as G1 recorded it: the seed's reports do not state the FX100's."""
    lines = [line for m in view.record.manifest.values() for line in m.array_write_cache]
    said = "; ".join(dict.fromkeys(lines)) if lines else "no NVMe-oF namespace was recorded by G1"
    return (
        f"the seed's reports do not state their array's controller cache settings, which move every storage "
        f"figure; this site's array reports its volatile write cache as: {said}"
    )


def grouped_setups(notes: Iterable[str]) -> tuple[str, ...]:
    """References measured on one setup said once: 'R2 (…) and R3 (…) were measured with …'."""
    by_setup: dict[str, list[str]] = {}
    for note in notes:
        label, _, setup = note.partition(" was measured ")
        if label not in by_setup.setdefault(setup, []):
            by_setup[setup].append(label)
    return tuple(
        f"{labels[0]} was measured {setup}"
        if len(labels) == 1
        else f"{', '.join(labels[:-1])} and {labels[-1]} were measured {setup}"
        for setup, labels in by_setup.items()
    )


def margin_text(row: CheckRow) -> str:
    """A check's distance from its threshold (kvgate.report.numbers.margin), in its own unit; where it
    has none (= 0), what the check said beside its figure: '0 requests' of how many (a reader asked)."""
    distance = margin(
        row.measured_value, row.expected_value, row.comparator, unit=row.unit, metric=row.metric
    )
    return distance or "; ".join(row.said)


def threshold_headline(row: CheckRow, what: str = "") -> Headline:
    recorded = is_recorded(row)
    volume = row.check.split(".")[0] if row.check.startswith("volume[") else ""
    return Headline(
        check_id=row.id,
        where=f"{row.host} {volume}".strip(),
        what=what or row.check,
        measured=row.measured,
        against="no specification: the site's recorded baseline" if recorded else f"{row.expected}",
        position="" if recorded else margin_text(row),
        evidence="" if recorded else evidence_of(row),
        verdict="RECORDED" if recorded and row.label == "PASS" else row.label,
    )


def candidate_vs_baseline(view: RunView) -> tuple[str, ...]:
    """G2: each headline figure of the candidate volume beside the baseline's on the same host, in
    words — a reader found the array slower than NFS at KV restore with nothing said of it."""
    kinds = {name: v.kind for name, v in view.record.volumes.items()}
    cands = [n for n, k in kinds.items() if k == "candidate"]
    bases = [n for n, k in kinds.items() if k == "baseline"]
    if view.gate != "g2" or len(cands) != 1 or len(bases) != 1:
        return ()
    found = {(r.host, r.check.split(".")[0], r.metric): r for r in view.all_rows}
    out = []
    for host in sorted({r.host for r in view.all_rows}):
        for metric, words in G2_HEADLINE.items():
            c = found.get((host, f"volume[{cands[0]}]", metric))
            b = found.get((host, f"volume[{bases[0]}]", metric))
            if c is None or b is None:
                continue
            cv, bv = c.measured_value, b.measured_value
            if not isinstance(cv, int | float) or not isinstance(bv, int | float) or not bv:
                continue
            ratio = cv / bv if not metric.endswith("_ns") else bv / cv  # latency: lower is better
            if view.smoke:  # the two volumes differ as the site set them up: no side to take
                out.append(f"{words}: {c.measured} against {b.measured}")
                continue
            out.append(f"{words}: {c.measured} against {b.measured} ({side(ratio, c, b, view.all_rows)})")
    return tuple(out)


def side(ratio: float, c: CheckRow, b: CheckRow, rows: Sequence[CheckRow]) -> str:
    """'the candidate ahead', unless the two differ by less than their repeats' spread (a reader found
    a write 'ahead' by 36 % beside a CV of 46 % over 2 repeats)."""
    spreads = [s for r in (c, b) if (s := spread_of(rows, r)) is not None]
    cvs = [float(v) for s in spreads if isinstance(v := s.measured_value, int | float)]  # fractions
    if 0.9 <= ratio <= 1.1:
        return "the candidate about even"
    if cvs and abs(ratio - 1) <= sum(cvs):
        return f"within their repeats' spread: CV {' and '.join(s.measured for s in spreads)}"
    return f"the candidate {'ahead' if ratio > 1 else 'behind'}"


def spread_of(rows: Sequence[CheckRow], row: CheckRow) -> CheckRow | None:
    """The CV check of a G2 rate's cell (its repeats' spread), or None."""
    volume, cell = row.check.split(".")[0], row.metric.split(".")[0]  # a rate's spread is its cell's
    if not row.metric.endswith(("_bytes_per_s", "_iops")):
        return None
    return next((r for r in rows if r.host == row.host and r.metric.startswith(f"{cell}.") and
                 r.metric.endswith("_cv") and r.check.startswith(volume)), None)  # fmt: skip


def seed_checked(view: RunView) -> str:
    """What checking the seed's figures against the numbers published beside them found, in one line for
    page 1 (a reader found R1's checkpoint bandwidths off by up to 89 % only on page 13)."""
    ids = {
        kind: [n.split(" ", 1)[0] for n in view.reference_notes if f" ({kind}):" in n]
        for kind in ("mismatch", "unsupported")
    }
    said = []
    if bad := ids["mismatch"]:
        one = len(bad) == 1
        said.append(
            f"{len(bad)} {'cross-check' if one else 'cross-checks'} of its figures against the numbers "
            f"published with them {'does' if one else 'do'} not hold ({', '.join(bad)}): notes on the seed, "
            "not verdicts of this run; some are other readings of the same figures, so this counts "
            "readings, not wrong figures"
        )
    if loose := ids["unsupported"]:
        said.append(f"{len(loose)} of its ranges no published figure reproduces ({', '.join(loose)})")
    return "; ".join(said)


def unsteady(view: RunView) -> tuple[BoxLine, ...]:
    """G2: a fio job whose runs at one setting lie far apart within the run, as page 1's box says its
    other anomalies (a reader found it beside its figure on page 2, the box counting one anomaly)."""
    if view.gate != "g2":
        return ()
    prof, out = view.record.configuration.gate_profile, []
    for r in view.all_rows:
        if r.metric not in G2_HEADLINE or not r.check.startswith("volume["):
            continue
        job = r.metric.split(".")[0]
        found, apart = job_elsewhere(prof, g2_row(view, r), job, measured=number_of(r.measured_value))
        if apart:
            volume = r.check.split("[", 1)[1].split("]")[0]
            first, second = f"{G2_HEADLINE[r.metric]} {r.measured}", f"{', '.join(found)} at the same setting"
            out.append(BoxLine(f"{r.host}/{volume}", first, second, apart[0].upper() + apart[1:]))
        cv = spread_of(view.all_rows, r)
        if cv is not None and (v := number_of(cv.measured_value)) is not None and v > DISAGREE_CV:
            volume = r.check.split("[", 1)[1].split("]")[0]  # a reader found a 79 % CV only in a table
            out.append(
                BoxLine(
                    f"{r.host}/{volume}",
                    f"{G2_HEADLINE[r.metric]} {r.measured}",
                    f"its repeats' CV of {cv.measured}",
                    "Its repeats disagree: past a CV of 50 % they lie far apart, so their mean, the figure "
                    "recorded, is no steady rate of this volume",
                )
            )
    return tuple(out)


def g2_row(view: RunView, row: CheckRow) -> G2Row | None:
    """What G2 stored of the check's host and volume (``volume[<name>].…``)."""
    volume = row.check.split("[", 1)[-1].split("]")[0]
    return view.record.g2_rows.get(f"{row.host}/{volume}")


def with_spread(head: Headline, view: RunView, rows: Sequence[CheckRow], row: CheckRow) -> Headline:
    """A G2 figure with its repeats' spread beside it, where its cell has a CV check (a reader found
    the spread only in the checks table, three pages on)."""
    cv = spread_of(rows, row)
    if head.position:
        return head
    if cv is None and row.metric.startswith(AGENT_WORKLOADS):  # run once: said, not left blank
        against = against_one_reader(g2_row(view, row), row.metric)
        return replace(head, position="one run: no spread" + (f"; {against}" if against else ""))
    if cv is None or cv.measured_value is None:
        return head
    profile = view.record.configuration.gate_profile
    repeats = getattr(profile, "repeats", None)
    position = f"CV {cv.measured}" + (f" over {repeats} repeats" if repeats else "")
    job = row.metric.split(".")[0]
    if elsewhere := same_job_elsewhere(
        profile, g2_row(view, row), job, measured=number_of(row.measured_value)
    ):
        position += f"; {elsewhere}"
    return replace(head, position=position)


def number_of(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def headline(view: RunView) -> tuple[Headline, ...]:
    rows = view.all_rows
    refs = [(r, ref) for r in rows if is_reference(r) and (ref := view.reference(r.rule)) is not None]
    out = [
        replace(
            reference_headline(r, ref, rows, restore=restore_vs_g2(view, r)),
            made=provenance(view, r, caveats=ARMS_TITLE),
            threshold=threshold_said(ref, r.expected_value),
        )
        for r, ref in refs
        if r.label != "SKIP"
    ]
    if view.gate == "g2":
        out += [
            with_spread(threshold_headline(r, t), view, rows, r)
            for m, t in G2_HEADLINE.items()
            for r in rows
            if r.metric.endswith(m)
        ]
    elif view.gate == "g4":
        out += [
            with_caveat(threshold_headline(r, g4_words(r)), view, r)
            for r in rows
            if r.comparator and r.rule.startswith("G4-") and r.label != "SKIP"
        ]
    elif view.gate == "g1":
        out += [family_headline(host, fam, rs) for (host, fam), rs in families(rows).items()]
    return tuple(out)


def with_caveat(head: Headline, view: RunView, row: CheckRow) -> Headline:
    """A G4 PASS whose page-1 caveat weakens it says so beside its figure: hits the page cache served,
    a tier that never reached its cap (a reader weighed both as plain green PASS rows)."""
    deployment = row.check[row.check.find("[") + 1 : row.check.find("]")]
    said = ""
    if row.check.endswith(".hit-retention") and any(
        c.startswith(f"{deployment} on {row.host}:") for c in hits_from_memory(view)
    ):
        said = "the hits came from the page cache, not the storage"
    elif row.check.endswith(".cache-capacity") and isinstance(row.measured_value, int | float):
        said = "below its cap: eviction at the cap not exercised" if row.measured_value < 1 else ""
    return replace(head, position=f"{head.position}; {said}" if said else head.position)


def g4_words(row: CheckRow) -> str:
    """'engines that died — tiny': a soak check in words, with its deployment ('soak[tiny].engines-up')."""
    subject, _, key = row.check.rpartition(".")
    words = G4_HEADLINE.get(row.metric, key.replace("-", " "))
    deployment = subject[subject.find("[") + 1 : -1] if subject.endswith("]") else subject
    return f"{words} — {deployment}" if deployment else words


def families(rows: Iterable[CheckRow]) -> dict[tuple[str, str], list[CheckRow]]:
    """BOM family → its checks on every host (one line for a cluster, not one per host)."""
    out: dict[tuple[str, str], list[CheckRow]] = {}
    for r in rows:
        out.setdefault(("", r.check.split(".")[0]), []).append(r)
    return out


def family_headline(_host: str, family: str, rows: list[CheckRow]) -> Headline:
    """G1: one line per BOM family — how many items match the BOM, on the hosts that judged them."""
    ok = [r for r in rows if r.label in ("PASS", "WAIVED")]
    judged = [r for r in rows if r.label != "SKIP"]
    worst = next((r.label for r in rows if r.flagged), "PASS" if judged else "SKIP")
    hosts = sorted({r.host for r in judged or rows})  # not a host whose BOM orders none of it
    one = judged[0] if len(judged) == 1 else None
    return Headline(
        where=hosts[0] if len(hosts) == 1 else f"{len(hosts)} hosts",
        what=f"{family} {item_words(one)}" if one else family,
        measured=one.measured
        if one
        else f"{len(ok)} of {len(judged)} match"
        if judged
        else not_ordered(rows),
        against=("the volume as declared" if family.startswith("volume[") else "the inventory's BOM")
        + (f": {one.expected}" if one else ""),
        position=margin_text(one) if one else "",
        evidence="" if one else values_said(judged),
        verdict=worst,
    )


def values_said(rows: list[CheckRow], most: int = 4) -> str:
    """The family's values, each once, at most ``most`` of them (a rack's hosts differ little)."""
    said = list(dict.fromkeys(item_said(r) for r in rows))
    more = f"; {len(said) - most} more in the checks table" if len(said) > most else ""
    return "; ".join(said[:most]) + more


G1_ITEM_WORDS = {"counters": "counters moved per byte read", "odirect": "O_DIRECT", "total": "total"}


def item_said(row: CheckRow) -> str:
    """'free 62.9 GiB (≥ 2 GiB)': one BOM item with its value and what the BOM asks (G1's page 1 showed
    '1 of 1 match' and no value; a reader asked for the values)."""
    return f"{item_words(row)} {row.measured} ({row.expected})"


def item_words(row: CheckRow) -> str:
    item = row.check.partition(".")[2] or row.check
    return G1_ITEM_WORDS.get(item, item)


def not_ordered(rows: list[CheckRow]) -> str:
    """'none ordered (gpus.count: 0)': a family the BOM orders none of, said so on page 1."""
    said = "inventory declares "
    reasons = sorted({reason_of_skip(r.condition) for r in rows})
    if reasons and all(r.startswith(said) for r in reasons):
        return f"none ordered ({'; '.join(r.removeprefix(said) for r in reasons)})"
    return "not applicable"


def counts(view: RunView, baselines: int) -> tuple[tuple[str, int], ...]:
    """The verdict counts with recorded baselines taken out of PASS (page 1: the non-zero ones)."""
    return tuple((k, n) for k, n in split_recorded(view.counts, view.labels, baselines).items() if n)


def columns(totals: dict[str, int]) -> tuple[str, ...]:
    """The summary table's verdict columns: PASS and FAIL always, the others where a check has them.

    >>> columns({"PASS": 9, "RECORDED": 3, "FAIL": 0, "INVALID": 0, "SKIP": 2})
    ('PASS', 'RECORDED', 'FAIL', 'SKIP')
    """
    return tuple(k for k, n in totals.items() if n or k in ("PASS", "FAIL"))


def split_recorded(found: dict[str, int], labels: tuple[str, ...], recorded: int) -> dict[str, int]:
    """Counts per label, with ``recorded`` baselines moved out of PASS into RECORDED (right after it).

    >>> split_recorded({"PASS": 12, "SKIP": 1}, ("PASS", "SKIP"), 3)
    {'PASS': 9, 'RECORDED': 3, 'SKIP': 1}
    >>> split_recorded({"PASS": 2}, ("PASS",), 0)
    {'PASS': 2}
    """
    out: dict[str, int] = {}
    for label in labels:
        out[label] = found.get(label, 0) - (recorded if label == "PASS" else 0)
        if label == "PASS" and recorded:
            out["RECORDED"] = recorded
    return out


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


def reason_of_skip(condition: str) -> str:
    """'metric: not applicable — why' → 'why' (the heading says "not applicable"); a measured figure
    ruled not comparable keeps its ruling.

    >>> reason_of_skip("x=76.6 ≥ 25.5 (R2: ↓26–32%) — not comparable: far above")
    'not comparable: far above'
    """
    said = "not applicable — "
    if said in condition:
        return condition.split(said, 1)[-1]
    if " — " in condition:
        return condition.split(" — ", 1)[-1]
    return condition.split(": ", 1)[-1] if ": " in condition else condition


# the SKIP checks of references page 1 lists as not judged, with their reasons, are named once under this
ON_PAGE_1 = "checks of the references page 1 names as not judged, for the reasons it gives"


def skip_groups(
    rows: Iterable[CheckRow], unjudged: Mapping[str, str] | None = None
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """SKIP check ids by reason; those of a reference page 1 lists as not judged, for the same reason,
    under one line (a reader found each reason three times: page 1, findings and sign-off)."""
    said = {rule: reason_of_skip(why) for rule, why in (unjudged or {}).items()}
    groups: dict[str, list[str]] = {}
    for r in rows:
        if r.label == "SKIP":
            reason = reason_of_skip(r.condition)
            reason = ON_PAGE_1 if reason and said.get(r.rule) == reason else reason
            groups.setdefault(reason or "declared not applicable", []).append(r.id)
    return tuple((k, tuple(v)) for k, v in groups.items())


@dataclass(frozen=True)
class PassRow:
    """PASS checks with the same criterion and measurement, on one or many hosts."""

    row: CheckRow  # the first; the others differ only by host
    hosts: tuple[str, ...]
    of: int  # hosts in the run

    @property
    def where(self) -> str:
        """Every host by name, or "all N hosts" (the scope names them): a rack's PDF does not repeat
        64 names in every row of a check that passed everywhere alike (issue 27)."""
        return f"all {self.of} hosts" if len(self.hosts) == self.of > 2 else ", ".join(self.hosts)


def pass_groups(
    rows: Iterable[CheckRow], shown: frozenset[str] = frozenset()
) -> tuple[tuple[str, tuple[PassRow, ...]], ...]:
    """PASS rows by family; identical results on several hosts as one row naming the hosts; a check
    page 1 already shows (``shown``) is not listed again.

    >>> from kvgate.base.criteria import Verdict
    >>> def ok(host: str, measured: str = "2") -> CheckRow:
    ...     return CheckRow(f"{host}/cpu.threads", host, "cpu.threads", Verdict.PASS, measured=measured)
    >>> [p.where for p in pass_groups([ok("a"), ok("b"), ok("c")])[0][1]]
    ['all 3 hosts']
    >>> [p.where for p in pass_groups([ok("a"), ok("b"), ok("c", "4")])[0][1]]
    ['a, b', 'c']
    """
    groups: dict[str, dict[tuple[str, str, str, str], list[CheckRow]]] = {}
    every = list(rows)
    for r in every:
        if r.label not in ("PASS", "WAIVED") or is_recorded(r) or r.id in shown:
            continue
        same = (r.check, r.expected, r.measured, r.label)
        groups.setdefault(r.check.split(".")[0], {}).setdefault(same, []).append(r)
    everyone = len({r.host for r in every})
    return tuple(
        (family, tuple(PassRow(rs[0], tuple(r.host for r in rs), everyone) for rs in by.values()))
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


# every report says "the seed's …"; a reader met the word undefined on every page 1
SEED = (
    "the published article (in Chinese) whose figures R1–R9 are this harness's references: it "
    "summarises signed benchmark reports (public: mingxin-tech/mingxin-kvcache-bench) of an all-flash "
    "array as the KV-cache tier, set against the server's own NVMe disk and an NFS server; “the seed's "
    "…” names what those reports used"
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
    cover = view.outcome.coverage
    if cover.bound:
        judged = f"{cover.text} its profile binds judged ({len(evaluated)} of {len(refs)} reference checks)"
        out.append(("References", judged))
    elif refs:
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
    notes = grouped_setups(h.note for h in heads if h.note)
    notes += (array_cache(view),) if notes else ()
    baselines = tuple(r for r in rows if is_recorded(r) and r.label == "PASS")
    return Summary(
        headline=heads,
        scope=scope(view),
        findings=findings(rows),
        skips=skip_groups(rows, view.outcome.coverage.unjudged),
        passes=pass_groups(rows, frozenset(h.check_id for h in heads if h.check_id)),
        baselines=baselines,
        fingerprint=view.fingerprint,
        counts=counts(view, len(baselines)),
        columns=columns(split_recorded(view.counts, view.labels, len(baselines))),
        by_host={
            h.host: split_recorded(h.counts, view.labels, sum(b.host == h.host for b in baselines))
            for h in view.hosts
        },
        totals=split_recorded(view.counts, view.labels, len(baselines)),
        conditions=shown_conditions(rows),
        environment=collapsed(view.manifest),
        tools=collapsed(view.tool_versions),
        comparability=notes,
        unjudged=unjudged(view),
        outlook=g3_outlook(view),
        g4_outlook=g4_outlook(view),
        soak_seen=seen_not_judged(view),
        soak_past=slopes_past_limits(view),
        versus=candidate_vs_baseline(view),
        serving_only=serving_only(view),
        shared_device=shared_device(view) or soak_shared(view),
        relaxed=tuple(relaxed_bounds(view)),
        unread=unread(view),
        volume_restores=volume_restores(view),
        capacity_arms=capacity_arms(view),
        from_memory=hits_from_memory(view),
        seed_checked=seed_checked(view),
        virtual_disks=tuple(
            f"{key}: {row.virtual}" for key, row in sorted(view.record.g2_rows.items()) if row.virtual
        ),
    )


def unread(view: RunView) -> tuple[str, ...]:
    """G1: the environment items it could not read, with why (a reader found the clock 'not read' only in
    the appendix)."""
    if view.gate != "g1":
        return ()
    return tuple(
        f"{item} on {hosts} ({value})"
        for item, value, hosts in collapsed(view.manifest)
        if value.startswith("not read") or " n/a" in f" {value}"
    )
