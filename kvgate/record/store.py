"""One directory per gate run, written as the run goes.

    results/<site>/<gate>-<UTC stamp>/
      run.json          versioned run record (rewritten atomically at each change)
      checks.jsonl      one line per evaluated check, appended and fsynced (latest wins)
      facts/<host>.json facts collected from each host (the environment manifest)
      artifacts/        raw command outputs per host, indexed with sha256 in index.jsonl

A crash or Ctrl-C leaves run.json with status "running" (read as incomplete) and
every check recorded so far; ``--resume`` re-runs only checks without a final
verdict (missing or ERROR).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kvgate import __version__
from kvgate.base import redact
from kvgate.base.criteria import Verdict
from kvgate.base.errors import StoreError
from kvgate.base.safefile import append_line, make_dirs, write_file
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.judgement import Coverage, GateVerdict, Judged, gate_outcome, is_baseline, is_figure
from kvgate.record.run_files import Line, check_meta, parse_json, parse_lines, read_text
from kvgate.record.schema import SCHEMA, ArtifactRecord, InventoryRef, JudgementRecord, RunRecord


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_revision() -> str:
    """The kvgate checkout's revision, '+dirty' when it has local changes."""
    try:
        rev = _git("rev-parse", "--short=12", "HEAD", check=True)
        dirty = _git("status", "--porcelain", "--untracked-files=no", check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return rev + ("+dirty" if dirty else "")


def _git(*args: str, check: bool) -> str:
    """The stripped output of git run on kvgate's own checkout."""
    here = Path(__file__).resolve().parent
    run = subprocess.run(
        ["git", "-C", str(here), *args], capture_output=True, text=True, timeout=10, check=check
    )
    return run.stdout.strip()


class RunStore:
    """Read and append to one run directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()  # hosts are collected concurrently, in threads

    @classmethod
    def create(cls, root: Path, *, site: str, gate: str, meta: dict[str, Any]) -> RunStore:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = root / site / f"{gate}-{stamp}"
        n = 1
        while path.exists():  # two runs in the same second
            n += 1
            path = root / site / f"{gate}-{stamp}-{n}"
        root.mkdir(parents=True, exist_ok=True)  # the root is the user's; below it no link is followed
        make_dirs(path.parent, root=root)
        try:
            path.mkdir()  # a new directory (refuses whatever is there, a link too)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create the run directory ({exc.strerror})") from None
        make_dirs(path / "artifacts", root=path)
        store = cls(path)
        store._write_meta(
            {
                "schema": SCHEMA,
                "gate": gate,
                "site": site,
                "kvgate_version": __version__,
                "git_revision": git_revision(),
                "started_at": utc_now(),
                "ended_at": None,
                "status": "running",
                "resumes": [],
                **meta,
            }
        )
        return store

    @classmethod
    def open(cls, path: Path) -> RunStore:
        """An existing run, in today's schema (another is a StoreError naming run.json's ``schema``)."""
        if path.exists() and not path.is_dir():
            raise StoreError(f"{path}: not a kvgate run directory (not a directory)")
        store = cls(path)
        store.meta()
        return store

    def run_record(self) -> RunRecord:
        """run.json as the typed record."""
        return RunRecord.model_validate(self.meta())

    # -- run.json -------------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        """run.json in the current schema, checked against the typed record (kvgate.record.RunRecord)."""
        where = self.path / "run.json"
        try:
            text = read_text(where)
        except FileNotFoundError:
            raise StoreError(f"{self.path}: not a kvgate run directory (no run.json)") from None
        return check_meta(parse_json(text, str(where)), str(where))

    def inventory(self) -> InventoryRef:
        """The inventory this run was started with (run.json ``inventory``: its path and sha256)."""
        recorded = self.run_record().inventory
        if recorded is None or not recorded.path:
            raise StoreError(f"{self.path / 'run.json'}: records no inventory (inventory.path)")
        return recorded

    def inventory_path(self) -> str:
        """Where that inventory was (run.json ``inventory.path``)."""
        return self.inventory().path

    def _write_meta(self, meta: dict[str, Any]) -> None:
        """The one writer of run.json: every key is the record's (kvgate.record.RunRecord), checked first
        as it will be read back (JSON: a tuple is a list), so what is written is what loads."""
        if isinstance(meta.get("argv"), list):
            meta = meta | {"argv": redact.argv([str(a) for a in meta["argv"]])}
        text = json.dumps(meta, indent=2, sort_keys=True, default=str)
        check_meta(json.loads(text), str(self.path / "run.json"))
        self._write(self.path / "run.json", text)

    def _write(self, path: Path, text: str) -> None:
        """Every JSON document of the run is written redacted, atomically, never through a link."""
        write_file(path, _redacted(text), root=self.path)

    def update_meta(self, **changes: Any) -> None:
        with self._lock:
            meta = self.meta()
            meta.update(changes)
            self._write_meta(meta)

    def merge_meta(self, **changes: dict[str, Any]) -> None:
        """Merge mappings into run.json keys atomically, e.g. manifest={host: {...}}."""
        with self._lock:
            meta = self.meta()
            for key, value in changes.items():
                meta[key] = meta.get(key, {}) | value
            self._write_meta(meta)

    def finish(self, status: str, **changes: Any) -> None:
        self.update_meta(status=status, ended_at=utc_now(), **changes)

    # -- checks ---------------------------------------------------------------------
    def record(self, rec: JudgementRecord) -> None:
        """Append a check's line to checks.jsonl (stamped with the time now, unless it has one)."""
        stamped = rec if rec.at else rec.model_copy(update={"at": utc_now()})
        with self._lock:
            line = redact.text(stamped.to_json())
            append_line(self.path / "checks.jsonl", line, root=self.path, sync=True)

    def checks(self) -> dict[str, JudgementRecord]:
        """Latest record per check id, in first-recorded order; a torn last line is ignored.

        Any other line that is not a check record (an edit, a truncation) is a StoreError naming it.
        """
        return {rec.id: rec for rec in self._lines("checks.jsonl", JudgementRecord)}

    def _lines(self, name: str, model: type[Line]) -> list[Line]:
        where = self.path / name
        try:
            return parse_lines(read_text(where), str(where), model)
        except FileNotFoundError:
            return []

    def finished_ids(self) -> set[str]:
        return {i for i, r in self.checks().items() if r.verdict != Verdict.ERROR}

    # -- facts and artifacts ----------------------------------------------------------
    def save_facts(self, host: str, facts: dict[str, Any]) -> None:
        self._write(self.path / "facts" / f"{host}.json", json.dumps(facts, indent=2, default=str))

    def facts(self) -> dict[str, dict[str, Any]]:
        """facts/<host>.json by host; each must be a JSON object."""
        d = self.path / "facts"
        return {p.stem: self._json_object(p) for p in sorted(d.glob("*.json"))} if d.is_dir() else {}

    @staticmethod
    def _json_object(path: Path) -> dict[str, Any]:
        data = parse_json(read_text(path), str(path))
        if not isinstance(data, dict):
            raise StoreError(f"{path}: expected a JSON object, got {type(data).__name__}")
        return data

    def artifact_index(self) -> list[ArtifactRecord]:
        """artifacts/index.jsonl's entries, checked as checks.jsonl is."""
        return self._lines("artifacts/index.jsonl", ArtifactRecord)

    def check_files(self) -> None:
        """Read every file a report or a resume reads; the first one that is wrong is a StoreError."""
        self.meta()
        self.checks()
        self.facts()
        self.artifact_index()

    def artifact(self, host: str, name: str, data: str | bytes, **info: Any) -> str:
        """Store raw output, secrets redacted (base.redact); returns its path relative to the run dir."""
        raw = _redacted(data)
        rel = Path("artifacts") / host / name
        write_file(self.path / rel, raw, root=self.path)
        entry = {
            "path": str(rel),
            "sha256": hashlib.sha256(raw).hexdigest(),
            "bytes": len(raw),
            "host": host,
            "at": utc_now(),
            **info,
        }
        with self._lock:
            line = redact.text(json.dumps(entry, default=str))
            append_line(self.path / "artifacts" / "index.jsonl", line, root=self.path)
        return str(rel)


def _redacted(data: str | bytes) -> bytes:
    """Text with every secret kvgate knows masked; bytes round-trip through it losslessly."""
    text = data if isinstance(data, str) else data.decode("utf-8", "surrogateescape")
    return redact.text(text).encode("utf-8", "surrogateescape")


def latest_run(root: Path, site: str, gate: str, *, inventory_sha256: str | None = None) -> RunStore | None:
    """The most recent run of a gate for a site (and inventory, if given), if any."""
    runs = sorted((root / site).glob(f"{gate}-*"), key=lambda p: p.name) if (root / site).is_dir() else []
    for p in reversed(runs):
        if not (p / "run.json").is_file():
            continue
        store = RunStore(p)
        if inventory_sha256 is None:
            return store
        recorded = store.run_record().inventory
        if recorded is not None and recorded.sha256 == inventory_sha256:
            return store
    return None


def outcome(store: RunStore) -> tuple[GateVerdict, list[str]]:
    """The run's gate verdict with its coverage, and the planned check ids that have no final verdict."""
    record, checks = store.run_record(), store.checks()
    missing = [c for c in record.planned if c not in checks]
    return judged_outcome(record, checks.values(), missing), missing


def judged_outcome(
    record: RunRecord, checks: Iterable[JudgementRecord], missing: Iterable[str]
) -> GateVerdict:
    """The gate-verdict rule over a run's checks, with the references its profile bound (run.json); G1,
    which binds no reference, covers the hardware families it checks (a reader took a PASS of a bill of
    materials that ordered no NVMe drive, no NVMe-oF subsystem and no GPU for an arrival accepted)."""
    stopped = "not evaluated: the run stopped"
    if record.gate == "g1":
        families = [replace(judged_of(c), rule=family(c.check)) for c in checks] + [
            Judged(None, family(m.partition("/")[2]), why=stopped) for m in missing
        ]
        bound = tuple(dict.fromkeys(j.rule for j in families))
        return gate_outcome(families, bound, noun="hardware families")
    judged = [judged_of(c) for c in checks] + [Judged(None, why=stopped) for _ in missing]
    reach = record.g3_reach
    g3 = None if reach is None else Coverage(tuple(reach.references), dict(reach.unjudged))
    return gate_outcome(
        judged, record.configuration.bound_references, short_soak=short_soak(record), g3_reach=g3
    )


def family(check: str) -> str:
    """A G1 check's hardware family: 'volume[scratch].mount' → 'volume', 'nvme.count' → 'nvme'."""
    return check.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0]


def host_outcomes(
    record: RunRecord, checks: Iterable[JudgementRecord], missing: Iterable[str]
) -> dict[str, GateVerdict]:
    """The gate-verdict rule over each host's checks: a host is labelled in the gate's words (a host that
    recorded only baselines reads BASELINE RECORDED, not PASS beside the gate's word)."""
    by_host: dict[str, list[JudgementRecord]] = {}
    gaps: dict[str, list[str]] = {}
    for c in checks:
        by_host.setdefault(c.host, []).append(c)
    for planned in missing:  # an early Ctrl-C leaves most checks without a verdict
        host = planned.split("/", 1)[0]
        by_host.setdefault(host, [])
        gaps.setdefault(host, []).append(planned)
    return {h: judged_outcome(record, cs, gaps.get(h, [])) for h, cs in by_host.items()}


def short_soak(record: RunRecord) -> str:
    """G4: why the soak its recorded profile ran was too short to judge drift; '' otherwise."""
    profile = record.configuration.gate_profile
    return (profile.too_short_for_slopes() or "") if isinstance(profile, G4Profile) else ""


def judged_of(c: JudgementRecord) -> Judged:
    """What the gate-verdict rule reads of one stored check."""
    baseline = is_baseline(comparator=c.comparator, expected=c.expected, unit=c.unit, source=c.source)
    return Judged(c.verdict, c.rule, baseline=baseline, figure=is_figure(c.unit), why=c.condition)
