"""A gate's report sections from its stored rows (``g2_rows``, ``g3_rows``, ``g4_rows`` of run.json).

The tables are laid out here, at render time, by the gate's table module; sections a run
keeps rendered (``sections``) are shown as they are. A row that cannot be
laid out (run.json edited by hand, a torn artifact) is a StoreError naming it, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from kvgate.base.errors import StoreError
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.record import RunRecord, Section
from kvgate.report import g2_tables, g3_tables, g4_tables

UNREADABLE = (KeyError, TypeError, ValueError, AttributeError, IndexError)  # what an edited row raises
Render = Callable[[Any], list[Section]]  # the gate's typed rows → its sections


def renderer(record: RunRecord, run_dir: Path) -> tuple[Mapping[str, Any], Render | None]:
    """The gate's stored rows and its table layout, bound to what it reads besides its rows."""
    if record.gate == "g2":
        return record.g2_rows, g2_tables.sections
    if record.gate == "g3":  # with each deployment's engine launches
        return record.g3_rows, lambda rows: g3_tables.sections(rows, record.engines, record.planned)
    if record.gate == "g4":  # with the soak windows it stored, its engine launches, its warm-up windows
        prof = record.configuration.gate_profile
        warmup = prof.limits.warmup_windows if isinstance(prof, G4Profile) else 0
        return record.g4_rows, lambda rows: g4_tables.sections(rows, run_dir, record.engines, warmup=warmup)
    return {}, None


def stored_sections(record: RunRecord, run_dir: Path) -> list[Section] | None:
    """The gate's sections: as the record keeps them rendered, or laid out from its rows."""
    if record.sections is not None:
        return record.sections
    rows, render = renderer(record, run_dir)
    if not rows or render is None:
        return None
    try:
        return render(rows)
    except UNREADABLE as exc:  # the rows are typed: what is left is an artifact they read (G4's windows)
        bad = next((k for k in sorted(rows) if not _lays_out(render, {k: rows[k]})), "?")
        field, why = f"{record.gate}_rows.{bad}", f"{type(exc).__name__}: {exc}"
        raise StoreError(f"{run_dir / 'run.json'}: {field} cannot be laid out as tables ({why})") from None


def _lays_out(render: Render, rows: Mapping[str, Any]) -> bool:
    try:
        render(rows)
    except UNREADABLE:
        return False
    return True
