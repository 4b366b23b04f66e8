"""``kvgate rejudge RUN``: judge a stored run again, against today's references, gate profiles and waivers.

A threshold or a waiver decided after a 72-hour soak must not cost another 72 hours. The
run's checks are planned again from the inventory it ran with (which must be unchanged:
its sha256 is in the record) and today's references and gate profiles; each check is
judged on what the record kept: the measurements it was judged on (``inputs``) or the stored
facts (G1). A check with nothing to judge again keeps its verdict and is listed as
carried; nothing is measured and no connection is opened.

The result is a **new run directory** beside the original, not a file added to it: the
original is sealed by its manifest (and perhaps signed), so writing into it would make it
read "modified after the run"; a new directory has its own manifest, renders and signs like
any run, and is what the next gate's order check finds. Its record names the run it
re-judged (with that run's manifest hash) and every change: criteria, waivers and verdicts.
The evidence (facts/, artifacts/) is hard-linked from the original (copied across devices).
"""

from __future__ import annotations

import getpass
import os
import sys
from pathlib import Path
from typing import Any

from kvgate.base.criteria import Judgement, Measurement, Verdict, fmt, symbol
from kvgate.base.errors import StoreError, UsageError
from kvgate.base.safefile import make_dirs, read_file, remove, write_file
from kvgate.configuration.gateconfig import GateConfig, load_config
from kvgate.configuration.references import DEFAULT_PATH as REFERENCES
from kvgate.configuration.references import references_used
from kvgate.configuration.waivers import Waivers, load_waivers
from kvgate.judgement import Check
from kvgate.orchestration.g1 import FactsProbe, evaluate_facts
from kvgate.orchestration.gate_plans import plans
from kvgate.probes.facts import HostFacts
from kvgate.record import (
    GATES,
    MAX_RUN_FILE_BYTES,
    PREFLIGHT,
    JudgementRecord,
    RunRecord,
    RunStore,
    WaiverRecord,
    check_seal,
    utc_now,
    verify_manifest,
    write_manifest,
)

CARRIED_KEYS = (
    "manifest",
    "tool_versions",
    "hosts",
    "forced",
    "previous_run",
    "engines",
    "g4_jobs",
    "contradictions",
)


def rejudge(
    run_dir: Path, *, waivers: Path | None = None, results: Path | None = None, inventory: Path | None = None
) -> RunStore:
    """Judge ``run_dir`` again into a new run directory under ``results`` (default: beside it).

    ``inventory``: where the run's inventory is now, if it moved (its sha256 must be the recorded one).
    """
    old = _sealed(run_dir)
    record = old.run_record()
    if record.gate not in (*GATES, PREFLIGHT):  # never judged as some other gate's run
        raise StoreError(f"{run_dir}/run.json: gate {record.gate!r} is not one kvgate knows")
    config = _config(old, inventory)
    checks = [c for plan in plans(record.gate) for c in plan(config)]
    in_force = load_waivers(waivers) if waivers else Waivers.model_validate({"waivers": record.waivers})
    new = _create(old, checks, in_force, config=config, root=results or run_dir.parent.parent)
    stored, facts = old.checks(), stored_facts(old)
    carried, changes = [], _config_changes(old, in_force)
    for check in checks:
        rec = stored.get(check.id)
        j = _judged_again(check, rec, facts)
        if j is None and rec is not None:  # nothing kept to judge it again: its verdict stands
            j = _as_recorded(check, rec)
            carried.append(check.id)
        if j is not None:
            final, waiver = in_force.apply(check.host, check.check, j)
            new.record(JudgementRecord.from_judgement(check.host, check.check, final, waiver=waiver))
            changes += _check_changes(check, rec, final)
    _finish(new, old, carried=carried, changes=changes + _plan_changes(checks, stored))
    return new


def stored_facts(old: RunStore) -> dict[str, HostFacts]:
    """The facts a G1 run kept, by host; a file that is not facts is named (exit 4)."""
    out = {}
    for host, data in old.facts().items():
        try:
            out[host] = HostFacts.from_json(data)
        except ValueError as exc:
            raise StoreError(f"{old.path}/facts/{host}.json: {exc}") from None
    return out


def _as_recorded(check: Check[Any], rec: JudgementRecord) -> Judgement:
    """The stored verdict before any waiver (today's waivers are applied to it again)."""
    verdict, condition = rec.verdict, rec.condition
    was = (rec.waiver or {}).get("was")
    if verdict is Verdict.WAIVED and was:
        verdict, condition = Verdict(was), condition.removesuffix(f" [was {was}]")
    return Judgement(verdict, condition, check.criterion, _stored_measurement(rec))


def _stored_measurement(rec: JudgementRecord) -> Measurement | None:
    """The value a line kept beside its verdict."""
    if rec.measured is None:
        return None
    return Measurement(rec.metric, rec.measured, rec.unit, tuple(rec.evidence))


def _sealed(run_dir: Path) -> RunStore:
    """The run to judge again: finished, and unmodified since (its manifest verifies)."""
    found = check_seal(run_dir, "rejudge")  # exit 2 when modified, before anything is read
    store = RunStore.open(run_dir)
    store.check_files()
    if found.status != "verified":
        raise StoreError(f"{run_dir}: cannot re-judge a run whose record is {found.summary()}")
    return store


def _config(old: RunStore, moved: Path | None) -> GateConfig:
    """The configuration of the inventory the run was planned from, unchanged since (its sha256)."""
    recorded = old.inventory()
    where = moved or Path(recorded.path)
    config = load_config(where)
    loaded = config.inventory
    if loaded.sha256 != recorded.sha256:
        raise UsageError(
            f"{where}: changed since run {old.path.name} (sha256 {recorded.sha256[:12]} then, "
            f"{loaded.sha256[:12]} now): rejudge judges a run with the inventory it ran with"
        )
    return config


def _judged_again(
    check: Check[Any], rec: JudgementRecord | None, facts: dict[str, HostFacts]
) -> Judgement | None:
    """The check judged on what the record kept; None when the record kept nothing to judge."""
    if check.ruled is not None:
        return check.evaluate()
    if rec is None or rec.verdict == Verdict.ERROR:
        return None
    if isinstance(check.spec, FactsProbe):  # G1: judged on the stored facts (its checks read families)
        return evaluate_facts(check, facts[check.host]) if check.host in facts else None
    return None if rec.inputs is None else check.evaluate(rec.inputs.inputs())


def _create(
    old: RunStore, checks: list[Check[Any]], waivers: Waivers, *, config: GateConfig, root: Path
) -> RunStore:
    record = old.run_record()
    meta = old.meta()
    carried = {k: meta[k] for k in CARRIED_KEYS if meta.get(k)}
    rows = {k: _without_verdicts(meta[k]) for k in ("g2_rows", "g3_rows", "g4_rows") if meta.get(k)}
    assert record.inventory is not None, "checked by _config"
    new = RunStore.create(
        root,
        site=record.site,
        gate=record.gate,
        meta=carried
        | rows
        | {
            "inventory": record.inventory.model_dump(),
            "argv": sys.argv,
            "planned": [c.id for c in checks],
            "waivers": [w.model_dump(mode="json") for w in waivers.waivers],
            "reference_notes": record.reference_notes,
            "configuration": _configuration(record, config),
        },
    )
    _link_evidence(old.path, new.path)
    return new


def _without_verdicts(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The gate tables' data without the verdict cells judged at measurement time (now stale)."""
    return {k: {**r, "verdicts": []} if "verdicts" in r else r for k, r in rows.items()}


def _configuration(record: RunRecord, config: GateConfig) -> dict[str, Any]:
    """The configuration files and the gate profile as this re-judgement loaded them (the gate profile
    where the run recorded one: G2's fio matrix, for page 1's scope; G3's or G4's gate profile)."""
    out: dict[str, Any] = config.recorded()
    profiles = {"g2": config.fio, "g3": config.g3, "g4": config.g4}
    if record.gate in profiles and record.configuration.gate_profile is not None:
        out["gate_profile"] = profiles[record.gate].model_dump(mode="json")
    return out


def _link_evidence(src: Path, dst: Path) -> None:
    """facts/ and artifacts/ of the original, hard-linked (copied when that cannot be)."""
    for top in ("facts", "artifacts"):
        for path in sorted(p for p in (src / top).rglob("*") if p.is_file() and not p.is_symlink()):
            target = dst / path.relative_to(src)
            make_dirs(target.parent, root=dst)  # never through a link (kvgate.base.safefile)
            remove(target, root=dst)
            try:
                os.link(path, target)
            except OSError:
                write_file(target, read_file(path, max_bytes=MAX_RUN_FILE_BYTES), root=dst)


def _config_changes(old: RunStore, waivers: Waivers) -> list[str]:
    """What differs in the configuration: references file, waivers in force."""
    out = []
    recorded = old.run_record().configuration.references
    now = references_used()["sha256"]
    if recorded is not None and recorded.sha256 != now:
        out.append(f"references {REFERENCES.name}: sha256 {recorded.sha256[:12]} → {now[:12]}")
    was = old.run_record().waivers
    if was != [WaiverRecord.model_validate(w.model_dump(mode="json")) for w in waivers.waivers]:
        out.append(f"waivers: {len(was)} in force then, {len(waivers.waivers)} now")
    return out


def _criterion_text(comparator: str, expected: object, unit: str) -> str:
    return f"{symbol(comparator)} {fmt(expected)}{f' {unit}' if unit else ''}".strip()


def _check_changes(check: Check[Any], rec: JudgementRecord | None, j: Judgement) -> list[str]:
    """A changed criterion and a moved verdict of one check, as the record lists them."""
    if rec is None:
        return [f"{check.id}: not evaluated then, {j.verdict} now"]
    out = []
    c = check.criterion
    then = _criterion_text(rec.comparator, rec.expected, rec.unit)
    now = _criterion_text(c.comparator, c.expected, c.unit)
    if rec.comparator and then != now:
        out.append(f"{check.id}: criterion {then} → {now} ({c.source})")
    if rec.verdict != j.verdict:
        out.append(f"{check.id}: {rec.verdict} → {j.verdict}")
    return out


def _plan_changes(checks: list[Check[Any]], stored: dict[str, JudgementRecord]) -> list[str]:
    planned = {c.id for c in checks}
    return [f"{cid}: no longer planned (its verdict is not carried)" for cid in stored if cid not in planned]


def _finish(new: RunStore, old: RunStore, *, carried: list[str], changes: list[str]) -> None:
    rejudged = {
        "run": str(old.path),
        "run_schema": old.run_record().schema_,
        "run_manifest_sha256": verify_manifest(old.path).manifest_sha256,
        "at": utc_now(),
        "by": getpass.getuser(),
        "changes": changes,
        "carried": carried,
    }
    new.update_meta(rejudged=rejudged)
    missing = set(new.run_record().planned) - new.finished_ids()
    new.finish("incomplete" if missing else "complete")
    write_manifest(new.path)
