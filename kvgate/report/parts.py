"""The run's secondary records as the report shows them: artifact index, manifest, sections."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from kvgate.base.criteria import fmt
from kvgate.base.errors import StoreError
from kvgate.record import RunStore, Section

# Characters XML 1.0 cannot carry (tool output may hold ANSI escapes); HTML shows them as garbage.
# Also the C1 controls and the bidirectional formatting characters: a right-to-left override
# (U+202E) in a host name or a reason would make a report read other than what it stores.
_BIDI_AND_C1 = "\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNPRINTABLE = re.compile(f"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[{_BIDI_AND_C1}]")


# UTF-8 read as Latin-1/cp1252 ("cafÃ©", "â€™"): engine text that was decoded twice.
_MOJIBAKE = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u2018-\u203a\u20ac\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6\u02dc]"
)


def demojibake(text: str) -> str:
    """Undo one UTF-8-as-Latin-1 decoding where that gives valid UTF-8; other text is left alone."""
    if not _MOJIBAKE.search(text):
        return text
    for codec in ("cp1252", "latin-1"):
        try:
            return text.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
    return text


def _shown(match: re.Match[str]) -> str:
    """A C0 control character as its visible picture (ESC → ␛, 0x02 → ␂), a C1 or bidi control as its
    code point (⟨U+202E⟩), anything else as U+FFFD."""
    code = ord(match.group(0))
    if code < 0x20:
        return chr(0x2400 + code)
    return f"⟨U+{code:04X}⟩" if code < 0xD800 else "\ufffd"


def printable(text: object) -> str:
    """``text`` with double-decoded UTF-8 repaired and control characters shown as pictures (␛, ␂)."""
    return _UNPRINTABLE.sub(_shown, demojibake(str(text)))


@dataclass(frozen=True)
class Artifact:
    """One raw output kept with the run (artifacts/index.jsonl)."""

    path: str
    bytes: int
    sha256: str
    host: str = ""

    @property
    def short_sha(self) -> str:
        return self.sha256[:12]


def artifacts(store: RunStore) -> tuple[Artifact, ...]:
    """The artifact index in recorded order, each line checked (a line that is not an entry: StoreError)."""
    return tuple(Artifact(e.path, e.bytes, e.sha256, e.host) for e in store.artifact_index())


def as_text(value: object) -> str:
    """A value as one table cell, in words, never JSON: lists joined by commas, a mapping as
    'key value' pairs, nothing as 'none', scalars via judge.fmt.

    >>> as_text(["amd-smi", "chronyc"]), as_text({"fio": "3.33", "nvme": "2.3"}), as_text({}), as_text(True)
    ('amd-smi, chronyc', 'fio 3.33, nvme 2.3', 'none', 'yes')
    """
    if isinstance(value, dict):
        return ", ".join(f"{k} {as_text(v)}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(as_text(v) for v in value) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "—" if value is None else fmt(value)


def flat_table(data: object) -> dict[str, list[tuple[str, str]]]:
    """{host: {key: value}} → {host: [(key, text)]}, hosts and keys sorted."""
    if not isinstance(data, dict):
        return {}
    return {
        str(host): sorted((str(k), as_text(v)) for k, v in (kv or {}).items())
        for host, kv in sorted(data.items())
        if isinstance(kv, dict)
    }


def section_template(name: str, where: Path) -> str:
    """'table.html' or 'sections/table.html' → 'sections/table.html'; nothing outside sections/."""
    path = PurePosixPath(name if name.startswith("sections/") else f"sections/{name}")
    if ".." in path.parts or path.suffix != ".html" or len(path.parts) != 2:
        raise StoreError(f"{where}: section template {name!r} must be a sections/<name>.html file")
    return str(path)


def sections(found: list[Section] | None, where: Path) -> tuple[Section, ...]:
    """The gate's sections as the report shows them: each template under sections/, a note once."""
    out: list[Section] = []
    for s in found or []:
        update = {"template": section_template(s.template, where), "data": once(s.data, out)}
        out.append(s.model_copy(update=update))
    return tuple(out)


def once(data: dict[str, Any], earlier: list[Section]) -> dict[str, Any]:
    """A note an earlier section already printed is referred to, not printed twice."""
    note = data.get("note")
    first = next((s.title for s in earlier if note and s.data.get("note") == note), None)
    return data if first is None else data | {"note": f"See the note under “{first}”."}
