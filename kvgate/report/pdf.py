"""The PDF report: the same HTML document laid out by WeasyPrint (A4; header and page numbers from CSS).

WeasyPrint fetches what the document links to (images, stylesheets, attachments).
A stored run is not trusted to link anywhere: its fetcher serves ``data:`` URLs and
regular files inside the run directory (after resolving symlinks), and refuses
everything else — another local file, the network — so nothing from outside the
run can end up in the PDF.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit


class RunDirFetcher:
    """WeasyPrint's ``url_fetcher`` for one run directory (see the module docstring)."""

    _fail_on_errors = False  # read by weasyprint.urls.fetch: a refused URL is skipped with a warning

    def __init__(self, run_dir: Path, fetch: Any) -> None:
        self.root, self._fetch = run_dir.resolve(), fetch

    def __call__(self, url: str) -> Any:
        if why := self.refusal(url):
            raise ValueError(why)
        return self._fetch(url)

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be fetched, or None."""
        parts = urlsplit(url)
        if parts.scheme == "data":
            return None
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            return f"refused {url[:200]}: the report fetches only data: URLs and files of its run"
        path = Path(unquote(parts.path)).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            return f"refused {url[:200]}: not a file inside the run directory {self.root}"
        return None


def write_pdf(html: str, *, run_dir: Path, target: BinaryIO) -> None:
    """Lay out ``html`` into ``target``; relative links resolve in ``run_dir``, the only place read."""
    with warnings.catch_warnings():
        # WeasyPrint 70 warns at import when HarfBuzz-Subset is missing; the PDF is correct without it.
        warnings.filterwarnings("ignore", message="HarfBuzz-Subset", category=DeprecationWarning)
        from weasyprint import HTML  # heavy import: only when a PDF is wanted
        from weasyprint.urls import URLFetcher

    fetcher = RunDirFetcher(run_dir, URLFetcher(allowed_protocols={"data", "file"}, allow_redirects=False))
    HTML(string=html, base_url=str(run_dir) + "/", url_fetcher=fetcher).write_pdf(target)
