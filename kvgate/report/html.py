"""The HTML report: jinja2 templates from reports/templates, rendered from a RunView.

Everything is autoescaped (StrictUndefined catches template typos). The only markup
passed through unescaped is kvgate's own: the stylesheet (reports/report.css) and the
inline SVG of ``sections/chart.html``, which kvgate's chart code produces; it must
start with ``<svg`` and contain no ``<script``. Never put user- or tool-supplied text
into ``data.svg``: put it in a table section, which is escaped.
"""

from __future__ import annotations

import functools
from pathlib import Path, PurePosixPath

import jinja2
from markupsafe import Markup

import kvgate
from kvgate.errors import KvgateError, StoreError
from kvgate.report.model import RunView
from kvgate.report.parts import printable


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


def href(path: str) -> str:
    """A relative link into the run directory, or '' for anything that could leave it."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or ".." in p.parts or ":" in path or "\\" in path:
        return ""
    return path


def trusted_svg(svg: object) -> Markup:
    """kvgate-produced inline SVG, passed through unescaped (see the module docstring)."""
    text = str(svg).strip()
    if not text.startswith("<svg") or "<script" in text.lower():
        raise StoreError("chart section: data.svg must be kvgate-produced <svg> without scripts")
    return Markup(text)  # kvgate's own chart output, checked above


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
    env.filters.update(verdict_class=verdict_class, href=href, trusted_svg=trusted_svg)
    return env


def stylesheet() -> Markup:
    """reports/report.css, inlined so report.html is one self-contained file."""
    return Markup((reports_dir() / "report.css").read_text())  # kvgate's own stylesheet


def render_section(env: jinja2.Environment, title: str, template: str, data: object) -> Markup:
    try:
        tpl = env.get_template(template)
    except jinja2.TemplateNotFound:
        raise StoreError(f"report section {title!r}: no template {template!r} in reports/templates") from None
    try:
        return Markup(tpl.render(title=title, data=data))  # autoescaped template output
    except jinja2.UndefinedError as exc:
        raise StoreError(f"report section {title!r} ({template}): its data lacks a field: {exc}") from None


def render_html(view: RunView, *, rendered_at: str) -> str:
    """The full report as one HTML document."""
    env = environment()
    sections = [(s.title, render_section(env, s.title, s.template, s.data)) for s in view.sections]
    return env.get_template("report.html").render(
        view=view,
        meta=view.meta,
        sections=sections,
        css=stylesheet(),
        rendered_at=rendered_at,
        renderer_version=kvgate.__version__,
    )
