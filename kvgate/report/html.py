"""The HTML report: jinja2 templates from reports/templates, rendered from a RunView.

Everything is autoescaped (StrictUndefined catches template typos). The only markup
passed through unescaped is the stylesheet (reports/report.css, kvgate's own) and the
inline SVG of ``sections/chart.html``, which is read from the stored run and so is
re-built from an allow-list first (kvgate.report.svg). Never put user- or
tool-supplied text into ``data.svg``: put it in a table section, which is escaped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

import jinja2
from markupsafe import Markup, escape

import kvgate
from kvgate.base.errors import KvgateError, StoreError
from kvgate.report.comparison import NONE, Comparison
from kvgate.report.contradictions import box
from kvgate.report.model import RunView
from kvgate.report.numbers import human
from kvgate.report.parts import printable
from kvgate.report.plots import charts
from kvgate.report.seal import marker, seal
from kvgate.report.summary import SEED, margin_text, summarize, unsteady
from kvgate.report.svg import sanitize


def reports_dir() -> Path:
    """The top-level reports/ directory (templates and CSS) of this kvgate checkout."""
    path = Path(kvgate.__file__).resolve().parent.parent / "reports"
    if not (path / "templates" / "report.html").is_file():
        raise KvgateError(
            f"{path}: report templates not found; install kvgate from its checkout (pip install -e .)"
        )
    return path


def verdict_class(label: str) -> str:
    """'NOT EVALUATED' → 'v-not-evaluated', the CSS class of a verdict badge."""
    return "v-" + label.lower().replace(" ", "-")


def anchor(title: str) -> str:
    """'G3 arms: recompute vs …' → 'g3-arms-recompute-vs-…': a section's id, for a link from page 1."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def href(path: str) -> str:
    """A relative link into the run directory, or '' for anything that could leave it."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or ".." in p.parts or ":" in path or "\\" in path:
        return ""
    return path


def trusted_svg(svg: object) -> Markup:
    """A stored chart, re-built from its allowed elements and attributes (see the module docstring)."""
    return Markup(sanitize(str(svg)))  # written anew by kvgate.report.svg from an allow-list


# Where a long identifier may wrap: after a separator, never inside a word or a number.
_BREAK = re.compile(r"(?<=[/_=,:|])(?![\d\s])|(?<=[A-Za-z\]]\.)(?=[A-Za-z])")  # also engine[x].check


# A stated range (↓26–32%, 8.6–20×) and a hyphenated name (gpu-node-01) stay on one line.
_WHOLE = re.compile(r"[↓↑+]?\d[\d.,]*–\d[\d.,]*[%×]?|\b\w+(?:-\w+)+\b")


def breakable(value: object) -> Markup:
    """Escaped text with wrap opportunities (<wbr>) between tokens: no word or number is split."""
    text = _BREAK.sub("<wbr>", str(escape(printable(value))))
    return Markup(_WHOLE.sub(_kept_whole, text))  # escaped above


def _kept_whole(m: re.Match[str]) -> str:
    """A range or a short hyphenated name on one line; a long compound may still wrap at a hyphen."""
    token = m.group(0)
    return token if len(token) > 20 and "–" not in token else f'<span class="nobr">{token}</span>'


def basename(path: str) -> str:
    """An evidence file's name; its full path and hash are in the artifact manifest."""
    return PurePosixPath(path).name or path


def human_bytes(value: object) -> str:
    return human(value, "B")


def rules_held(rows: Iterable[Any]) -> list[tuple[str, str]]:
    """Each rule of a family's pass rows (or of check rows) with what it holds, once: '≥ 1×' or a bare
    'PF-ENG-1' means nothing without it."""
    checks = [getattr(p, "row", p) for p in rows]
    return list(dict.fromkeys((r.rule, r.source) for r in checks if r.rule and r.source))


# the template filters, each registered under its own name ("{{ row.label|verdict_class }}")
FILTERS = (
    verdict_class,
    anchor,
    href,
    trusted_svg,
    breakable,
    margin_text,
    human_bytes,
    basename,
    rules_held,
)


def finalize(value: object) -> object:
    """Every ``{{ value }}``: control characters replaced before autoescaping; markup untouched."""
    return value if isinstance(value, Markup) or not isinstance(value, str) else printable(value)


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        finalize=finalize,
        loader=jinja2.FileSystemLoader(reports_dir() / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update({f.__name__: f for f in FILTERS})
    return env


def stylesheet() -> Markup:
    """reports/report.css, inlined so report.html is one self-contained file."""
    return Markup((reports_dir() / "report.css").read_text())  # kvgate's own stylesheet


PRINT_ROWS = 60  # a longer table prints evenly spaced rows, the first and the last; report.html has all


def printed_rows(rows: list[object]) -> list[object]:
    if len(rows) <= PRINT_ROWS:
        return rows
    step = (len(rows) - 1) / (PRINT_ROWS - 1)
    return [rows[round(i * step)] for i in range(PRINT_ROWS)]


def for_paper(data: object) -> object:
    """A table section's data for the PDF: at most PRINT_ROWS rows, saying how many it leaves out."""
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("rows"), list)
        or len(data["rows"]) <= PRINT_ROWS
    ):
        return data
    total, note = len(data["rows"]), str(data.get("note") or "")
    shown = f"The PDF shows {PRINT_ROWS} of {total} rows, evenly spaced with the first and the last"
    shown += "; report.html has all."
    return data | {"rows": printed_rows(data["rows"]), "note": f"{shown} {note}".strip()}


def render_section(env: jinja2.Environment, title: str, template: str, data: object) -> Markup:
    try:
        tpl = env.get_template(template)
    except jinja2.TemplateNotFound:
        raise StoreError(f"report section {title!r}: no template {template!r} in reports/templates") from None
    try:
        return Markup(tpl.render(title=title, data=data))  # autoescaped template output
    except jinja2.UndefinedError as exc:
        raise StoreError(f"report section {title!r} ({template}): its data lacks a field: {exc}") from None


def render_html(
    view: RunView, *, rendered_at: str, comparison: Comparison = NONE, for_print: bool = False
) -> str:
    """The full report as one sealed HTML document (its own hash in its sign-off: kvgate.report.seal).

    ``for_print`` leaves out the lists only report.html gives.
    """
    env = environment()
    sections = [
        (s.title, render_section(env, s.title, s.template, for_paper(s.data) if for_print else s.data))
        for s in view.sections
    ]
    html = env.get_template("report.html").render(
        report_sha256=(mark := marker()),  # the document's own hash goes there (kvgate.report.seal)
        view=view,
        summary=summarize(view),
        contradictions=box(view.contradictions) + unsteady(view),
        seed=SEED,
        comparison=comparison,
        charts=charts(view),
        for_print=for_print,
        sections=sections,
        css=stylesheet(),
        rendered_at=rendered_at,
        renderer_version=kvgate.__version__,
    )
    return seal(html, mark)
