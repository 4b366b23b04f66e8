"""Charts from a stored run, re-built from an allow-list before they reach report.html.

A chart's SVG is read from run.json, which anyone with the run directory can edit,
and it is inserted into the report unescaped. So it is parsed (no DOCTYPE, entity,
comment or CDATA: no ``<!`` at all), every element and attribute is checked against
what kvgate's own charts use — shapes, text, numbers, colours; no script, event
handler, link, ``style``, ``foreignObject`` or image — and the markup is written
anew from the parsed tree. Anything else is refused with a StoreError naming it.

>>> sanitize('<svg width="10" height="5"><rect width="4" height="2" fill="#fff"/></svg>')
'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="5"><rect width="4" height="2" fill="#fff"/></svg>'
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

from kvgate.base.errors import StoreError

SVG_NS = "http://www.w3.org/2000/svg"
MAX_CHARS = 1 << 20
ELEMENTS = frozenset(
    [
        "svg",
        "g",
        "line",
        "polyline",
        "polygon",
        "path",
        "rect",
        "circle",
        "ellipse",
        "text",
        "tspan",
        "title",
        "desc",
    ]
)
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_LENGTH = re.compile(rf"{_NUMBER}(?:px|%|em)?")
_NUMBERS = re.compile(rf"(?:{_NUMBER}[\s,]*)+")
_PATH = re.compile(r"[0-9eE.,+\-\sMmLlHhVvCcSsQqTtAaZz]*")
_COLOR = re.compile(r"none|#[0-9a-fA-F]{3,8}|[a-zA-Z]{1,30}|rgb\(\s*\d{1,3}%?(?:\s*,\s*\d{1,3}%?){2}\s*\)")
_WORD = re.compile(r"[a-zA-Z-]{1,30}")
_TRANSFORM = re.compile(rf"(?:\s*(?:translate|scale|rotate|matrix)\(\s*(?:{_NUMBER}[\s,]*)*\)\s*)+")
_FONT = re.compile(r"[A-Za-z0-9 ,-]{1,100}")
LENGTHS = "x y x1 y1 x2 y2 cx cy r rx ry dx dy width height stroke-width font-size opacity fill-opacity"
ATTRIBUTES: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(f"{LENGTHS} stroke-opacity".split(), _LENGTH),
    **dict.fromkeys(("viewBox", "stroke-dasharray"), _NUMBERS),
    **dict.fromkeys(("points", "d"), _PATH),
    **dict.fromkeys(("fill", "stroke"), _COLOR),
    **dict.fromkeys(
        ["text-anchor", "dominant-baseline", "font-weight", "stroke-linecap", "stroke-linejoin"], _WORD
    ),
    "font-family": _FONT,
    "transform": _TRANSFORM,
}


def sanitize(svg: str) -> str:
    """The chart re-written from its allowed parts; StoreError naming the first part that is not."""
    text = svg.strip()
    if len(text) > MAX_CHARS or "<!" in text or not text.startswith("<svg"):
        raise StoreError("chart section: data.svg must be one <svg> element of at most 1 MiB, without <!…>")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise StoreError(f"chart section: data.svg is not well-formed SVG ({exc})") from None
    return _write(root, top=True)


def _write(el: ET.Element, *, top: bool = False) -> str:
    tag = _local(el.tag, "element")
    if tag not in ELEMENTS or (top and tag != "svg"):
        raise StoreError(f"chart section: data.svg element <{tag}> is not allowed in a chart")
    attrs = [("xmlns", SVG_NS)] if top else []
    attrs += [(_attribute(tag, name, value), value) for name, value in el.attrib.items()]
    head = tag + "".join(f" {name}={quoteattr(value)}" for name, value in attrs)
    body = escape(el.text or "") + "".join(_write(child) + escape(child.tail or "") for child in el)
    return f"<{head}>{body}</{tag}>" if body else f"<{head}/>"


def _attribute(tag: str, name: str, value: str) -> str:
    local = _local(name, "attribute")
    pattern = ATTRIBUTES.get(local)
    if pattern is None or not pattern.fullmatch(value):
        raise StoreError(
            f"chart section: data.svg attribute {local}={value[:80]!r} on <{tag}> is not allowed"
        )
    return local


def _local(name: str, what: str) -> str:
    """The local name of an SVG (or un-namespaced) element or attribute; another namespace is refused."""
    ns, _, local = name.rpartition("}")
    if ns and ns != "{" + SVG_NS:
        raise StoreError(f"chart section: data.svg {what} {name!r} is from another namespace")
    return local
