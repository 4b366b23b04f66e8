"""A gate's report sections from its stored rows (``g2_rows``, ``g3_rows``, ``g4_rows`` of run.json).

The tables are laid out here, at render time, by the gate's table module; a kvgate.run/1
run kept its sections rendered (``sections``), shown as they are. A row that cannot be
laid out (run.json edited by hand, a torn artifact) is a StoreError naming it, never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kvgate.base.errors import StoreError
from kvgate.report import g2_tables, g3_tables, g4_tables

UNREADABLE = (KeyError, TypeError, ValueError, AttributeError, IndexError)  # what an edited row raises
Render = Callable[[dict[str, dict[str, Any]]], list[dict[str, Any]]]


def renderer(meta: dict[str, Any], run_dir: Path) -> Render | None:
    """The gate's table layout, bound to what it reads besides its rows."""
    gate = meta.get("gate")
    if gate == "g2":
        return g2_tables.sections
    if gate == "g3":
        engines = meta.get("engines") or {}  # each deployment's engine launches
        return lambda rows: g3_tables.sections(rows, engines)
    if gate == "g4":
        return lambda rows: g4_tables.sections(rows, run_dir)  # with the soak windows it stored
    return None


def stored_sections(meta: dict[str, Any], run_dir: Path) -> list[dict[str, Any]] | None:
    """The gate's sections, laid out from the record's data (a kvgate.run/1 run kept them rendered)."""
    if meta.get("sections") is not None:
        return list(meta["sections"])
    rows, render = meta.get(f"{meta.get('gate')}_rows") or {}, renderer(meta, run_dir)
    if not rows or render is None:
        return None
    try:
        return render(rows)
    except UNREADABLE as exc:
        bad = next((k for k in sorted(rows) if not _lays_out(render, {k: rows[k]})), "?")
        field, why = f"{meta.get('gate')}_rows.{bad}", f"{type(exc).__name__}: {exc}"
        raise StoreError(f"{run_dir / 'run.json'}: {field} cannot be laid out as tables ({why})") from None


def _lays_out(render: Render, rows: dict[str, Any]) -> bool:
    try:
        render(rows)
    except UNREADABLE:
        return False
    return True
