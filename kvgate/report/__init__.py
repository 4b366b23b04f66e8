"""Acceptance report: HTML, PDF and JUnit XML rendered only from a stored run directory.

Rendering never runs a command or opens a connection, so any run (finished,
interrupted or resumed) can be re-rendered offline:

Usage::

    paths = render(Path("results/lab-a/g1-20260101T000000Z"))
    paths.pdf.name
    # → 'report.pdf'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kvgate.base.safefile import replacing, write_file
from kvgate.record import utc_now
from kvgate.report.comparison import frame, with_previous
from kvgate.report.history import History, compare_figures
from kvgate.report.history_tables import compare_table, runs_table
from kvgate.report.html import render_html
from kvgate.report.junit import render_junit
from kvgate.report.model import RunView, load_run
from kvgate.report.pdf import write_pdf
from kvgate.report.seal import verify_report, write_sums

__all__ = [
    "History",
    "RenderedPaths",
    "RunView",
    "compare_figures",
    "compare_table",
    "frame",
    "load_run",
    "render",
    "render_html",
    "render_junit",
    "runs_table",
    "verify_report",
]


@dataclass(frozen=True)
class RenderedPaths:
    html: Path
    pdf: Path | None  # None when rendered with pdf=False
    junit: Path
    regressions: tuple[str, ...] = ()  # figures worse than the previous comparable run beyond their noise


def render(run_dir: Path, *, pdf: bool = True, allowed_signers: Path | None = None) -> RenderedPaths:
    """Write run_dir/report.html, report.pdf (unless ``pdf=False``), junit.xml and their report.sha256.

    The run is compared with the previous comparable run in the results root's history
    (``<run_dir>/../../history.sqlite``), then indexed there.
    """
    view = load_run(run_dir, allowed_signers=allowed_signers)
    record, root = view.history_entry(), run_dir.resolve().parent.parent
    comparison = with_previous(root, record)
    stamp = utc_now()
    html = render_html(view, rendered_at=stamp, comparison=comparison)
    write_file(run_dir / "report.html", html.encode())  # atomic, never through a link (kvgate.base.safefile)
    write_file(run_dir / "junit.xml", render_junit(view))
    target = run_dir / "report.pdf"
    if pdf:
        with replacing(target) as out:
            printed = render_html(view, rendered_at=stamp, comparison=comparison, for_print=True)
            write_pdf(printed, run_dir=run_dir, target=out)
    else:
        target.unlink(missing_ok=True)  # a PDF from an earlier render would contradict the new HTML
    write_sums(run_dir, ["report.html", *(["report.pdf"] if pdf else []), "junit.xml"])
    History(root).index(record)
    return RenderedPaths(
        run_dir / "report.html", target if pdf else None, run_dir / "junit.xml", comparison.regressions
    )
