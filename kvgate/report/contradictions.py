"""Page 1's box of contradictions: two figures of one run that cannot both stand, with their numbers.

The gate finds them and keeps them in run.json (``contradictions``: kvgate.orchestration.g2.ceiling,
kvgate.orchestration.g3.measure); the report only words them. A figure is shown with its unit the
way people read it (``3.87 GB/s``, ``16 I/Os in flight``) and named by what produced it.

>>> from kvgate.record import Contradiction, Figure
>>> kv = Figure(name="KV restore, parallel readers", value=3.87e9, unit="B/s", source="kv_restore")
>>> top = Figure(name="read ceiling", value=2.26e9, unit="B/s", source="ceiling")
>>> box([Contradiction(where="h/scratch", first=kv, second=top, meaning="not the ceiling")])[0].text
'KV restore, parallel readers 3.87 GB/s against read ceiling 2.26 GB/s: not the ceiling'
"""

from __future__ import annotations

from dataclasses import dataclass

from kvgate.record import Contradiction, Figure
from kvgate.report.numbers import human


@dataclass(frozen=True)
class BoxLine:
    """One contradiction as page 1 shows it."""

    where: str
    first: str  # "KV restore, parallel readers 3.87 GB/s"
    second: str
    meaning: str

    @property
    def text(self) -> str:
        return f"{self.first} against {self.second}: {self.meaning}"


def shown(figure: Figure) -> str:
    """A figure with its name and its number as people read it."""
    return f"{figure.name} {human(figure.value, figure.unit)}"


def box(found: list[Contradiction]) -> tuple[BoxLine, ...]:
    """Every contradiction the gate recorded, in the order it recorded them."""
    return tuple(BoxLine(c.where, shown(c.first), shown(c.second), c.meaning) for c in found)
