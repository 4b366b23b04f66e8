"""G3 held to the planner: predicted beside measured, and no restore faster than the storage can deliver.

Before the arms are summarised, every SSD restore (one prompt, or a load of C prompts,
the whole machine's, R1's readers') is held to G2's figures of the tier's volume: the
bytes it needed (prompt tokens × state bytes per token) over its time (its TTFT; for a
load, the time to its last first token) must not exceed the most G2 ever saw that
device deliver (``ceiling.best_read_bw_bytes_per_s``) with a margin. A restore faster
than that was served by something other than the SSD (page cache, DRAM, a tier that
was never cold): INVALID, with the numbers, in the arm and in the cold proof.

Then the planner (:mod:`kvgate.orchestration.plan`) predicts each arm from G2's figures and this run's
own recompute arm (its prefill rate), and the report sets predicted beside measured
(kvgate.report.g3_extra_tables).

>>> too_fast(4e9, 2.0, best_bytes_per_s=1e9).split(":")[0]
'the restore moved 4 GB in 2 s (2 GB/s), more than the storage can deliver (G2 best 1 GB/s + 25%)'
>>> too_fast(1e9, 2.0, best_bytes_per_s=1e9) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kvgate.base.criteria import Measurement
from kvgate.base.errors import LabError, ModifiedRun
from kvgate.base.units import rate as shown_rate
from kvgate.configuration.gateconfig import GateConfig
from kvgate.orchestration.g3.arms import Trial
from kvgate.orchestration.g3.load_arms import LoadTrial
from kvgate.orchestration.g3.protocol import ArmsResult
from kvgate.orchestration.plan import (
    Options,
    Prediction,
    Sourced,
    TierFigures,
    assumed_storage,
    g2_storage,
    latest_passed,
    plan_deployment,
    serving_from_arm,
)
from kvgate.orchestration.plan import state_bytes_per_token as planned_bytes_per_token
from kvgate.probes.fio import CEILING_MARGIN
from kvgate.record import ArmFigures, RunStore

MARGIN = CEILING_MARGIN  # G2's best is one fio cell's mean or one repeat: a restore may beat it a little
# the restores held to the candidate's G2 figures (the baseline volume's arms are not the candidate's)
RESTORE_ARMS = (
    "ssd-restore",
    "serial-read",
    "parallel-read",
    "ssd-tier",
    "candidate-volume",
    "candidate-volume-whole",
)
# every arm whose engine restores its state from a volume: a restore bandwidth is its figure
VOLUME_RESTORE_ARMS = (*RESTORE_ARMS, "baseline-volume", "baseline-volume-whole")


def too_fast(needed_bytes: float, seconds: float, *, best_bytes_per_s: float) -> str | None:
    """Why a restore of ``needed_bytes`` in ``seconds`` cannot have come from this storage, or None."""
    if seconds <= 0 or needed_bytes <= 0:
        return None
    speed = needed_bytes / seconds
    if speed <= best_bytes_per_s * (1 + MARGIN):
        return None
    return (
        f"the restore moved {needed_bytes / 1e9:.3g} GB in {seconds:.3g} s ({shown_rate(speed)}), "
        f"more than the storage can deliver (G2 best {shown_rate(best_bytes_per_s)} "
        f"+ {MARGIN:.0%}): something other than the SSD served it"
    )


def _join(*reasons: str | None) -> str | None:
    return "; ".join(r for r in reasons if r) or None


@dataclass(frozen=True)
class StorageBound:
    """One deployment's storage figures (the latest usable G2 run of this inventory) and its state size."""

    config: GateConfig
    host: str
    deployment: str
    figures: TierFigures  # measured in G2, or assumed from the inventory (then never used to invalidate)
    measured: bool  # the figures come from a usable G2 run
    bytes_per_token: float | None

    @classmethod
    def load(cls, store: RunStore, config: GateConfig, *, host: str, name: str) -> StorageBound:
        """The figures for ``name`` on ``host`` from the results root this G3 run lives in."""
        inv = config.inventory.inventory
        record, dep = store.run_record(), inv.engines[name]
        root = store.path.parent.parent  # results/<site>/<gate>-<stamp>
        ref = record.inventory  # none recorded: no G2 run can be of the same inventory
        try:
            g2 = latest_passed(root, record.site, "g2", ref.sha256) if ref is not None else None
        except ModifiedRun as exc:  # edited during the run (the CLI checked it before): no figures from it
            raise LabError(str(exc)) from None
        figures = g2_storage(g2, host, dep.volume) if g2 is not None else None
        bpt = planned_bytes_per_token(dep, config.engine(dep.tier_profile)).value
        storage = figures or assumed_storage(inv, host, dep.volume)
        return cls(config, host, name, storage, figures is not None and figures.best.known, bpt)

    # -- before the arms are summarised -------------------------------------------------------
    def hold(self, arms: ArmsResult) -> ArmsResult:
        """Every restore checked against the storage; a too-fast one carries why (INVALID)."""
        best = self.figures.best.value
        if not self.measured or best is None or not self.bytes_per_token:
            return arms
        arms.trials = {
            a: [self._trial(t, best) if a == "ssd-restore" else t for t in ts]
            for a, ts in arms.trials.items()
        }
        loads_of = (
            arms.load_trials,
            arms.capacity_trials,
            arms.whole_trials,
            arms.read_trials,
            arms.volume_trials,
        )
        for loads in loads_of:
            for arm in [a for a in loads if a in RESTORE_ARMS]:
                loads[arm] = [self._load(t, best) for t in loads[arm]]
        return arms

    def _trial(self, t: Trial, best: float) -> Trial:
        why = self._why(t, best)
        return replace(t, invalid_reason=_join(t.invalid_reason, why)) if why else t

    def _why(self, t: Trial, best: float | None) -> str | None:
        if not self.measured or best is None or not t.predicted_bytes or not t.outcome.ttft_s:
            return None
        return too_fast(t.predicted_bytes, t.outcome.ttft_s, best_bytes_per_s=best)

    def _load(self, t: LoadTrial, best: float) -> LoadTrial:
        # a capacity round restores its turns' documents (reusable_tokens), not their questions
        tokens = t.reusable_tokens or t.summary.get("total_input_tokens") or t.counted_prompt_tokens
        if not tokens or not t.first_tokens_done_s or not self.bytes_per_token:
            return t
        why = too_fast(float(tokens) * self.bytes_per_token, t.first_tokens_done_s, best_bytes_per_s=best)
        return replace(t, invalid_reason=_join(t.invalid_reason, why)) if why else t

    # -- after ----------------------------------------------------------------------------------
    def held_cold(self, cold: Measurement, arms: ArmsResult) -> Measurement:
        """The cold proof, carrying every restore faster than G2 saw the storage deliver."""
        best = self.figures.best.value
        fast = [
            f"trial {t.index}: {why}"
            for t in arms.trials.get("ssd-restore", [])
            if (why := self._why(t, best))
        ]
        return replace(cold, invalid_reason=_join(cold.invalid_reason, *fast)) if fast else cold

    def recorded(self) -> dict[str, Any]:
        """G2's figures of the tier's volume as the run record keeps them (bytes/s; None: unknown)."""
        f = self.figures
        return {
            "measured": self.measured,  # False: assumed from the inventory, not measured by G2
            "read_ceiling_bytes_per_s": f.ceiling.value,
            "kv_restore_request_bytes_per_s": f.per_request.value,
            "best_read_bytes_per_s": f.best.value,
            "source": f.ceiling.source,
        }

    def compare(self, measured: dict[str, ArmFigures]) -> list[dict[str, Any]]:
        """Per G3 workload: the planner's numbers beside the arms' medians (data for the report)."""
        rc = measured.get("recompute")
        serving = serving_from_arm(rc, "this run") if rc is not None else None
        plan = plan_deployment(
            self.config, self.deployment, self.host, storage=self.figures, serving=serving, options=Options()
        )
        return [_row(p, measured, plan.storage.ceiling) for p in plan.predictions]


def _row(p: Prediction, measured: dict[str, ArmFigures], ceiling: Sourced) -> dict[str, Any]:
    c = p.workload.concurrency
    suffix = "" if c == 1 else f"@c{c}"
    restore, recompute = measured.get(f"ssd-restore{suffix}"), measured.get(f"recompute{suffix}")
    return {
        "concurrency": c,
        "prompt_tokens": p.workload.prompt_tokens,
        "restore_ttft_s": [p.restore_ttft_s, restore.ttft_p50_s if restore else None],
        "recompute_ttft_s": [p.recompute_ttft_s, recompute.ttft_p50_s if recompute else None],
        "storage_floor_s": p.storage_floor_s,
        "tier_bytes": p.tier_bytes,
        "ceiling": ceiling.source,
    }
