"""The PDF report: the same HTML document laid out by WeasyPrint (A4; header and page numbers from CSS)."""

from __future__ import annotations

import warnings
from pathlib import Path


def write_pdf(html: str, *, base_url: Path, target: Path) -> None:
    """Lay out ``html`` to ``target``; relative links resolve against ``base_url`` (the run directory)."""
    with warnings.catch_warnings():
        # WeasyPrint 70 warns at import when HarfBuzz-Subset is missing; the PDF is correct without it.
        warnings.filterwarnings("ignore", message="HarfBuzz-Subset", category=DeprecationWarning)
        from weasyprint import HTML  # heavy import: only when a PDF is wanted

    HTML(string=html, base_url=str(base_url) + "/").write_pdf(str(target))
