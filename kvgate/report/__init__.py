"""Acceptance report: HTML, PDF and JUnit XML rendered only from a stored run directory.

Rendering never runs a command or opens a connection, so any run (finished,
interrupted or resumed) can be re-rendered offline:

Usage::

    paths = render(Path("results/lab-a/g1-20260101T000000Z"))
    paths.pdf.name
    # → 'report.pdf'

    model.py             a stored run loaded into RunView, the typed view every render reads
    summary.py           what page 1 and the findings say: headline figures, scope, findings first
    scope_lines.py       page 1's profile and scope lines: what each gate ran, from what its record keeps
    coverage_lines.py    what the verdict covers: the bound references not judged, named, by reason
    provenance.py        beside a headline figure: the deployment, model and load that made it, its spread
    contradictions.py    page 1's box: figures of the run that contradict each other, with their numbers
    parts.py             the run's secondary records as shown: artifact index, manifest, sections
    numbers.py           numbers for people: SI units at a sensible precision, never e-notation
    gate_tables.py       a gate's sections from its stored rows (``g2_rows``, ``g3_rows``, ``g4_rows``)
    tables.py            what every gate's tables share: a table section, rows in order, stored cells
    g2_tables.py         G2's tables, laid out from the numbers G2 recorded
    g3_tables.py         G3's tables: arms, verdicts before waivers, both volumes of storage
    g3_extra_tables.py   G3's planner, serving-latency and storage tables
    g3_notes.py          beside G3's numbers: how the arms ran and what an engine cannot show
    g3_figures.py        G3's raw figures as the record keeps them, for charts and the evidence checklist
    restore_evidence.py  a G3 restore's bandwidth beside G2's figures of the same volume
    g4_tables.py         G4's tables: the soak's windows, its verdicts
    g4_extra_tables.py   G4's drift as slopes, integrity load and its failures, device health, kernel lines
    engine_tables.py     the appendix of G3 and G4: each engine's command line, version and timings
    plots.py             the report's charts, drawn at render time from the RunView
    g3_plots.py          G3's charts: TTFT distributions, throughput against its reference's band, R1
    soak_plots.py        G4's time series, one chart per soaked deployment, with the slopes G4 judged
    charts.py            matplotlib's SVG reduced to what the report's allow-list keeps
    svg.py               a stored chart re-built from an allow-list before it reaches report.html
    html.py              the HTML report: autoescaped jinja2 templates (reports/templates), from a RunView
    pdf.py               the PDF: the same document laid out by WeasyPrint, fetching only inside the run
    junit.py             JUnit XML from the stored checks (not from pytest), so a resumed run's is complete
    seal.py              the report's own hash, in its sign-off; ``kvgate verify-report FILE`` checks it
    comparison.py        the comparison with the previous comparable run, as table rows for people
    history_tables.py    the history and a comparison as terminal tables (rich)
    history/             run history for nightly CI: every rendered run indexed in SQLite, compared
    indexing.py          the history in step with the run directories (sync, --rebuild); seals checked first
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvgate.base.safefile import remove, replacing, write_file
from kvgate.record import utc_now
from kvgate.report.comparison import frame, with_previous
from kvgate.report.history import History, compare_figures, not_comparable, regressions
from kvgate.report.history_tables import compare_table, runs_table
from kvgate.report.html import render_html
from kvgate.report.indexing import UnverifiedRun, rebuild, sealed_entry, sync
from kvgate.report.junit import render_junit
from kvgate.report.model import load_run
from kvgate.report.pdf import write_pdf
from kvgate.report.seal import verify_report, write_sums

__all__ = [
    "History",
    "RenderedPaths",
    "UnverifiedRun",
    "compare_figures",
    "compare_table",
    "frame",
    "not_comparable",
    "rebuild",
    "regressions",
    "render",
    "runs_table",
    "sealed_entry",
    "sync",
    "verify_report",
]


@dataclass(frozen=True)
class RenderedPaths:
    html: Path
    pdf: Path | None  # None when rendered with pdf=False
    junit: Path
    regressions: tuple[str, ...] = ()  # figures worse than the previous comparable run beyond their noise
    history_notes: tuple[str, ...] = ()  # history rows dropped, run directories not indexed, and why


def render(run_dir: Path, *, pdf: bool = True, allowed_signers: Path | None = None) -> RenderedPaths:
    """Write run_dir/report.html, report.pdf (unless ``pdf=False``), junit.xml and their report.sha256.

    The run is indexed in the results root's history (``<run_dir>/../../history.sqlite``),
    unless its record was modified after the run, then compared with the previous comparable run.
    """
    view = load_run(run_dir, allowed_signers=allowed_signers)
    record, root = view.history_entry(), run_dir.resolve().parent.parent
    if not view.integrity.changed:  # an edited figure never becomes the next run's baseline
        History(root).index(record)
    comparison = with_previous(root, record)
    stamp = utc_now()
    html = render_html(view, rendered_at=stamp, comparison=comparison)
    write_file(run_dir / "report.html", html.encode(), root=run_dir)  # atomic, never through a link
    write_file(run_dir / "junit.xml", render_junit(view, comparison), root=run_dir)
    target = run_dir / "report.pdf"
    if pdf:
        with replacing(target, root=run_dir) as out:
            printed = render_html(view, rendered_at=stamp, comparison=comparison, for_print=True)
            write_pdf(printed, run_dir=run_dir, target=out)
    else:
        remove(target, root=run_dir)  # a PDF from an earlier render would contradict the new HTML
    write_sums(run_dir, ["report.html", *(["report.pdf"] if pdf else []), "junit.xml"])
    return RenderedPaths(
        run_dir / "report.html",
        target if pdf else None,
        run_dir / "junit.xml",
        comparison.regressions,
        comparison.notes,
    )
