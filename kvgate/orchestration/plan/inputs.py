"""Where the planner's numbers come from: a stored G2 run, a stored G3 run, the inventory, or a declaration.

Every input is a :class:`Sourced`: a value (None when unknown) and the sentence that
says where it came from, so ``kvgate plan`` and G3 can print what they assumed.

- storage (G2): the volume's re-measured read ceiling (``ceiling.read_bw_bytes_per_s``)
  and one request's KV-restore bandwidth at G2's concurrency (its request bytes over
  its p50 latency), from the latest *passed* G2 run of this inventory; without one,
  the volume's ``expect:`` promise (``min_seq_read_gb_per_s``, else the RDMA line rate
  × ``line_rate_fraction``), said to be assumed;
- prefill rate and decode time (G3): the recompute arm of the latest G3 run of this
  inventory whose recompute arm is trusted; else a rate declared on the command
  line; else unknown.

>>> Sourced(2.0e9, "G2").known, Sourced(None, "no G2 run").known
(True, False)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kvgate.base.errors import StoreError
from kvgate.base.units import GB
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.fio_job import fio_size
from kvgate.configuration.fio_matrix import SweepPoint
from kvgate.configuration.inventory import EngineDeployment, Inventory
from kvgate.probes.engines import tiny_hf_kv_bytes_per_token
from kvgate.probes.fio import CEILING_CELL, configuration
from kvgate.record import ArmFigures, RunStore, check_seal, git_revision, outcome, read_text


@dataclass(frozen=True)
class Sourced:
    """One planner input and where it came from."""

    value: float | None
    source: str

    def __post_init__(self) -> None:
        """A figure no lab produces (an infinite ceiling, a 400-digit count) is refused, never planned on."""
        if self.value is not None and not math.isfinite(self.value):
            raise StoreError(f"{self.source}: {self.value} is not a finite figure to plan on")

    @property
    def known(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class TierFigures:
    """The tier volume's read ceiling and one restore's bandwidth, with their sources."""

    ceiling: Sourced  # bytes/s
    per_request: Sourced  # bytes/s
    best: Sourced  # bytes/s: the most G2 ever saw the device deliver (G3's "too fast" bound)


def runs_newest_first(root: Path, site: str, gate: str, sha256: str) -> list[RunStore]:
    """Every sealed run of ``gate`` for this site and inventory, newest first. Any run of it modified
    after its end stops the plan (ModifiedRun, exit 2); one cut before its end is no evidence."""
    found = sorted((root / site).glob(f"{gate}-*"), key=lambda p: p.name, reverse=True)
    out = []
    for path in found:
        try:
            store = RunStore.open(path)
            recorded = store.run_record().inventory
        except StoreError:
            continue  # not a run directory (or a torn one): not evidence
        if recorded is not None and recorded.sha256 == sha256 and _sealed(path):
            out.append(store)
    return out


def _sealed(path: Path) -> bool:
    return check_seal(path, "a plan from its figures").status == "verified"


def latest_passed(root: Path, site: str, gate: str, sha256: str) -> RunStore | None:
    """The newest run of ``gate`` for this inventory whose every check is final and none failed (a G2
    baseline recorded counts: its figures are measured, not judged)."""
    for store in runs_newest_first(root, site, gate, sha256):
        verdict, missing = outcome(store)
        if verdict.gate_ok and not missing:
            return store
    return None


def _artifact(store: RunStore, host: str, name: str) -> Any:
    path = store.path / "artifacts" / host / name
    try:
        return json.loads(read_text(path))
    except (FileNotFoundError, StoreError, ValueError):
        return None


def g2_storage(store: RunStore, host: str, volume: str) -> TierFigures | None:
    """What a G2 run measured on one host's volume; None when it did not measure that volume."""
    ms = _artifact(store, host, f"g2/{volume}/measurements.json")
    if not isinstance(ms, dict):
        return None
    where, path = g2_named(store), f"G2 {store.path}"
    ceiling = _trusted(ms, f"{CEILING_CELL}.read_bw_bytes_per_s")
    config = _configuration(ms, path)
    per_request = _trusted(ms, "kv_restore.parallel.request_bytes_per_s")
    requests = _trusted(ms, "kv_restore.requests")
    best = _trusted(ms, f"{CEILING_CELL}.best_read_bw_bytes_per_s") or ceiling
    try:  # a figure no lab produces is refused, the error naming the run's directory
        return TierFigures(
            Sourced(
                ceiling,
                f"{where}: read ceiling ({config})" if ceiling else f"{where}: no trusted read ceiling",
            ),
            Sourced(
                per_request,
                f"{where}: KV restore, {requests or 0:.0f} requests at once, p50 latency"
                if per_request
                else f"{where}: no trusted KV-restore latency",
            ),
            Sourced(best, f"{where}: the best read bandwidth G2 saw (sweep and ceiling repeats)"),
        )
    except StoreError as exc:
        raise StoreError(f"{path}: {exc}") from None


def g2_named(store: RunStore) -> str:
    """'G2 run g2-… (BASELINE RECORDED, kvgate a9ef7aa27d4e)': the run a figure came from, its verdict
    (a baseline is recorded, not passed) and the kvgate that measured it, where it is not this one."""
    revision, here = store.run_record().git_revision or "of unknown revision", git_revision()
    other = "" if revision == here else f"; this is kvgate {here}"
    return f"G2 run {store.path.name} ({outcome(store)[0].text}, kvgate {revision}{other})"


def _configuration(ms: dict[str, Any], where: str) -> str:
    """How G2 reached the ceiling: ``bs 4m, 8 jobs × QD 16``, or the read that raised it; a StoreError
    when the recorded cell is no fio job."""
    raised = ms.get(f"{CEILING_CELL}.raised_by")
    if isinstance(raised, dict) and isinstance(raised.get("value"), str):
        return str(raised["value"]).split(": ")[0]  # "KV restore, … read 3.87 GB/s, above the fio sweep's …"
    bs, nj, qd = (_trusted(ms, f"{CEILING_CELL}.{k}") for k in ("bs_bytes", "numjobs", "iodepth"))
    if bs is None or nj is None or qd is None:
        return "configuration not recorded"
    if not all(math.isfinite(v) and 1 <= v == int(v) for v in (bs, nj, qd)):
        raise StoreError(
            f"{where}: ceiling bs_bytes, numjobs, iodepth = {bs}, {nj}, {qd}: expected whole numbers ≥ 1"
        )
    return configuration(SweepPoint(int(nj), int(qd), 0.0, fio_size(int(bs))))


def _trusted(ms: dict[str, Any], metric: str) -> float | None:
    m = ms.get(metric)
    if not isinstance(m, dict) or m.get("invalid_reason") or not isinstance(m.get("value"), int | float):
        return None
    try:
        return float(m["value"])
    except OverflowError:  # an integer past any float: as infinite, which Sourced refuses
        return math.inf


def assumed_storage(inv: Inventory, host: str, volume: str) -> TierFigures:
    """Without a usable G2 run: the volume's promised sequential read, else a share of the line rate."""
    e, src = inv.volumes[volume].expect, f"inventory volumes.{volume}.expect"
    unknown = Sourced(
        None, "no G2 run: per-request restore bandwidth unknown (each restore may reach its share)"
    )
    if e.min_seq_read_gb_per_s is not None:
        value, why = e.min_seq_read_gb_per_s * GB, f"assumed, no usable G2 run: {src}.min_seq_read_gb_per_s"
    elif e.line_rate_fraction is not None and (rate := inv.line_rate_bytes_per_s(host)) is not None:
        value, why = (
            e.line_rate_fraction * rate,
            f"assumed, no usable G2 run: {src}.line_rate_fraction × RDMA line rate",
        )
    else:
        return TierFigures(
            Sourced(None, f"no usable G2 run and no {src}.min_seq_read_gb_per_s"), unknown, unknown
        )
    return TierFigures(Sourced(value, why), unknown, Sourced(value, why))


def state_bytes_per_token(dep: EngineDeployment, tier: EngineProfile) -> Sourced:
    """KV (state) bytes the tier stores per prompt token: the inventory's, or the tiny model's."""
    if dep.state_bytes_per_token is not None:
        return Sourced(dep.state_bytes_per_token, "inventory state_bytes_per_token")
    if tier.tiny_model == "hf":
        return Sourced(tiny_hf_kv_bytes_per_token(), "the tiny HF Llama's KV (kvgate.probes.engines.tinyhf)")
    if tier.tiny_model == "gguf":
        from kvgate.probes.engines import TinyLlamaSpec

        spec = TinyLlamaSpec()
        return Sourced(spec.llama_cpp_state_bytes_per_token, "the tiny GGUF's KV + logits row (tinymodel)")
    return Sourced(None, f"{tier.name} serves no tiny model (tiny_model): set state_bytes_per_token")


@dataclass(frozen=True)
class Serving:
    """The recompute arm's prefill rate and decode time, with their source."""

    prefill_tok_per_s: Sourced
    decode_s: Sourced


def g3_serving(store: RunStore, host: str, deployment: str) -> Serving | None:
    """The recompute arm of one deployment in a G3 run (conc 1), when it was trusted."""
    doc = _artifact(store, host, f"g3/{deployment}/arms.json")
    try:
        arm = ArmFigures.model_validate(doc["arms"]["recompute"])
    except (TypeError, KeyError, ValidationError):
        return None  # no such deployment in that run, or an edited artifact: nothing to plan on
    return serving_from_arm(arm, f"G3 {store.path}")


def serving_from_arm(arm: ArmFigures, where: str) -> Serving | None:
    """Prefill = prompt tokens p50 / TTFT p50; decode = E2E p50 − TTFT p50 (one request at a time)."""
    tokens, ttft, e2e = arm.prompt_tokens_p50, arm.ttft_p50_s, arm.e2e_p50_s
    if arm.invalid_reasons or not tokens or not ttft:
        return None
    rate = tokens / ttft
    prefill = Sourced(
        rate, f"measured: {where}: recompute arm, {tokens:.0f} tokens in {ttft:.3g} s (TTFT p50)"
    )
    decode = (
        Sourced(e2e - ttft, f"measured: {where}: recompute E2E − TTFT p50")
        if e2e
        else Sourced(None, "no E2E latency recorded")
    )
    return Serving(prefill, decode)
