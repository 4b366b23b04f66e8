"""The history index kept in step with the run directories, and the seal checked before figures are read.

The history (kvgate.report.history) is an index of the run directories under a results root
(``<root>/<site>/<gate>-<stamp>/``), never the record itself: a run directory copied in is
indexed, a row whose directory is gone is dropped, and ``kvgate history --rebuild`` re-makes
every row. A run's figures enter the index or a comparison only once its manifest verifies
(:func:`sealed_entry`), so an edited figure is refused instead of compared.

Usage::

    notes = sync(History(Path("results")))   # what was added, dropped or refused, for people
    sealed_entry(Path("results/lab-a/g2-20260101T000000Z")).figures
"""

from __future__ import annotations

from pathlib import Path

from kvgate.base.errors import KvgateError, StoreError
from kvgate.record import RunStore, verify_manifest
from kvgate.report.history import History, HistoryEntry, run_id_of
from kvgate.report.model import load_run


class UnverifiedRun(StoreError):
    """A run whose manifest does not verify: its figures are not read (exit 2, as an untrusted number)."""


def sealed_entry(run_dir: Path) -> HistoryEntry:
    """What the history keeps of a run, read only after its seal verified (the one place it is checked)."""
    RunStore.open(run_dir)  # a directory that is no run is named as such, not as an unsealed run
    found = verify_manifest(run_dir)  # kvgate.record's verify-before-reading will replace this line
    if not found.intact:
        raise UnverifiedRun(f"{run_dir}: its figures are not read: the run record is {found.summary()}")
    return load_run(run_dir).history_entry()


def run_dirs(root: Path) -> dict[str, Path]:
    """Every run directory under a results root, by run id (real directories only, no links)."""
    found = (p.parent for p in root.glob("*/*/run.json") if p.is_file() and not p.is_symlink())
    return {run_id_of(d): d for d in found if not d.is_symlink() and not d.parent.is_symlink()}


def sync(history: History) -> list[str]:
    """Drop rows whose run directory is gone and index the run directories the history lacks."""
    on_disk, indexed = run_dirs(history.root), set(history.run_ids())
    gone = sorted(indexed - on_disk.keys())
    history.forget(gone)
    notes = [f"history row {r} dropped: its run directory is gone" for r in gone]
    return notes + _index(history, [on_disk[r] for r in sorted(on_disk.keys() - indexed)])


def rebuild(history: History) -> list[str]:
    """Every row re-made from the run directories (each run's seal verified again)."""
    history.forget(history.run_ids())
    return _index(history, list(run_dirs(history.root).values()))


def _index(history: History, dirs: list[Path]) -> list[str]:
    notes = []
    for d in dirs:
        try:
            entry = sealed_entry(d)
        except KvgateError as exc:  # one unreadable run does not hide the others
            notes.append(f"not indexed: {exc}")
            continue
        history.index(entry)
        notes.append(f"indexed {run_id_of(d)}")
    return notes
