"""The G3 gate profile (``workloads/g3/<scale>.yaml``): trial sizes, evidence bounds, verdict bindings.

A profile says how big each trial is, how strict the cold proof and the
write-through check are, and which reference judges which arm comparison with
what threshold. Thresholds default to the reference's lower bound
(``threshold_fraction: 1.0``, ``tolerance: 0``); a site may lower them, and the
report shows the site threshold next to the reference.

>>> p = load_g3_profile("smoke")
>>> p.trials >= 3, p.verdict("ttft-p50-reduction").reference
(True, 'R2-ttft-p50-tp8')
"""

from __future__ import annotations

import functools
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, model_validator

from kvgate.base.config_file import Frozen
from kvgate.configuration.bounds import Bytes, Count, Duration, Millis, Ratio, Tokens
from kvgate.configuration.gate_profiles.loader import Profile, load_gate_profile, read_gate_profile
from kvgate.configuration.inventory import Environment

ARMS = ("recompute", "ssd-restore", "warm")
READ_ARMS = ("serial-read", "parallel-read")  # R1: the same tier, its reader serial vs parallel
# R2/R3's capacity expansion: the same engine and its HBM/DRAM prefix cache, without and with the SSD tier
CAPACITY_ARMS = ("dram-only", "ssd-tier")
# R2/R3 as the seed's reports measured them: the same engine's SSD tier on the site's baseline volume
# (local NVMe there) and on the candidate volume; ``-whole``: every engine instance together (R3)
VOLUME_ARMS = ("baseline-volume", "candidate-volume")
WHOLE_VOLUME_ARMS = ("baseline-volume-whole", "candidate-volume-whole")
Level = Annotated[Count, Field(ge=1)]  # a load level: requests (or sessions) in flight
Statistic = Literal["ttft_p50_s", "output_throughput_tok_per_s", "read_bw_gb_per_s"]


class Unmeasurable(StrEnum):
    """What a verdict becomes when this engine cannot measure it (never PASS)."""

    SKIP = "skip"
    INVALID = "invalid"


class ColdBounds(Frozen):
    """How much of the predicted restore the counters must show for the arm to count as cold."""

    min_read_ratio: float = Field(default=0.9, gt=0, le=1)  # engine and device bytes / predicted
    min_hit_ratio: float = Field(default=0.9, gt=0, le=1)  # restored tokens / prompt tokens
    # device bytes / the engine's own over a restore: above it, another reader shared the device and
    # the restore's evidence is qualified (its bandwidth is always the engine's bytes over its time)
    max_device_ratio: Ratio = Field(default=1.5, ge=1)
    # over an arm whose engine reads nothing from the volume (recompute, a DRAM tier, warm): device
    # bytes above this were another reader's, and the arm's evidence is qualified the same way; any
    # arm's device may read this much more than its engine (a log, metadata) whatever the ratio
    max_idle_device_bytes: Bytes = Field(default=64 << 20, ge=0)


class WriteThrough(Frozen):
    """Cache-directory growth after populate, as a ratio of the predicted state bytes."""

    min_ratio: Ratio = Field(default=0.9, gt=0)
    max_ratio: Ratio = Field(default=2.0, gt=0)


class ClientBounds(Frozen):
    """When a load's client timings are trusted (kvgate.probes.loadgen.starvation); None: recorded only.

    A client starved of CPU beside the engine stamps tokens late and in bunches, so its TTFT, ITL
    and TPOT are the host's scheduling, not the engine's serving: such a load is INVALID, its lag shown.
    """

    max_loop_lag_p99_ms: Millis | None = Field(default=None, gt=0)
    max_bunched_share: float | None = Field(default=None, gt=0, le=1)


class VerdictBinding(Frozen):
    """One G3 verdict: a reference judging a statistic of two arms at a concurrency."""

    check: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    reference: str
    statistic: Statistic
    baseline_arm: str
    candidate_arm: str
    # "engine": the engine's real concurrency; C: the load level C; [C1, C2, C3]: every one of these
    # levels, the least improvement judged (R2's TTFT row spans three); "whole-machine": every
    # engine instance of the host driven together (R3's TP4×2 figure)
    concurrency: Level | tuple[Level, ...] | Literal["engine", "whole-machine"] = "engine"
    threshold_fraction: Ratio = Field(default=1.0, gt=0)
    tolerance: float = Field(default=0.0, ge=0, lt=1)
    when_unmeasurable: Unmeasurable = Unmeasurable.INVALID
    reason: str = ""  # why it may be unmeasurable: shown in the report with the SKIP/INVALID

    @model_validator(mode="after")
    def _explained(self) -> VerdictBinding:
        if self.when_unmeasurable is Unmeasurable.SKIP and not self.reason:
            raise ValueError("a verdict that may be skipped needs its declared reason")
        arms = (self.baseline_arm, self.candidate_arm)
        if any(a in READ_ARMS for a in arms) and arms != READ_ARMS:
            raise ValueError(
                f"the cold-read arms compare baseline {READ_ARMS[0]} with candidate {READ_ARMS[1]}"
            )
        if self.statistic == "read_bw_gb_per_s" and arms != READ_ARMS:
            raise ValueError("read_bw_gb_per_s is measured on the cold-read arms only")
        if any(a in CAPACITY_ARMS for a in arms) and arms != CAPACITY_ARMS:
            raise ValueError(
                f"the capacity arms compare baseline {CAPACITY_ARMS[0]} with candidate {CAPACITY_ARMS[1]}"
            )
        for pair in (VOLUME_ARMS, WHOLE_VOLUME_ARMS):
            if any(a in pair for a in arms) and arms != pair:
                raise ValueError(f"the volume arms compare baseline {pair[0]} with candidate {pair[1]}")
        if self.volumes and not self.levels:
            raise ValueError("the volume arms run at load levels: give their concurrency")
        if self.capacity and self.concurrency == "engine":
            raise ValueError("the capacity arms run at load levels: give their concurrency or whole-machine")
        if isinstance(self.concurrency, tuple) and not (self.concurrency and (self.capacity or self.volumes)):
            raise ValueError("a list of concurrency levels is judged on the capacity or volume arms only")
        return self

    @property
    def cold_read(self) -> bool:
        """Whether this binding compares the serial and parallel tier readers (R1)."""
        return self.baseline_arm in READ_ARMS

    @property
    def capacity(self) -> bool:
        """Whether this binding compares the engine without and with its SSD tier (R2/R3)."""
        return self.baseline_arm in CAPACITY_ARMS

    @property
    def volumes(self) -> bool:
        """Whether this binding compares the SSD tier on the baseline and the candidate volume (R2/R3)."""
        return self.baseline_arm in VOLUME_ARMS + WHOLE_VOLUME_ARMS

    @property
    def whole_volumes(self) -> bool:
        """Whether it compares them with every engine instance of the host driven together (R3)."""
        return self.baseline_arm in WHOLE_VOLUME_ARMS

    @property
    def levels(self) -> tuple[int, ...]:
        """The load levels this binding is judged on (none: the engine's own or the whole machine)."""
        c = self.concurrency
        return c if isinstance(c, tuple) else (c,) if isinstance(c, int) else ()


class StorageBinding(Frozen):
    """A reference judging candidate vs baseline volume on one of the agent's storage workloads."""

    check: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    reference: str
    # engine_ready_s: R9's service load (launch to a ready endpoint); engine_weights_load_s: the
    # weight load within it (its log); model_load_s: the agent's fastest loader (weights only)
    statistic: Literal[
        "engine_ready_s",
        "engine_weights_load_s",
        "model_load_s",
        "checkpoint_write_s",
        "checkpoint_write_bw_bytes_per_s",
    ]
    threshold_fraction: Ratio = Field(default=1.0, gt=0)
    tolerance: float = Field(default=0.0, ge=0, lt=1)
    # the engine of inventory model_loads.<name> (R9's own model on its platform); None: the deployment's
    model_load: str | None = None

    @model_validator(mode="after")
    def _engine_only(self) -> StorageBinding:
        if self.model_load is not None and not self.statistic.startswith("engine_"):
            raise ValueError("model_load names the engine of a model load: bind an engine_ statistic")
        return self


class StorageProfile(Frozen):
    """Model loading (R9) and checkpoint (R1): the agent's workloads on the candidate and a baseline."""

    model_load: str  # workloads/models/<name>.yaml: its model_load section
    checkpoint: str  # workloads/models/<name>.yaml: its checkpoint section
    when_unmeasurable: Unmeasurable = Unmeasurable.INVALID  # no baseline volume, or the same device
    reason: str = ""
    verdicts: tuple[StorageBinding, ...] = Field(min_length=1)
    # R9's engine starts: one untimed warm-up, then this many timed starts per volume, alternating
    engine_starts: Count = Field(default=2, ge=2)

    @model_validator(mode="after")
    def _explained(self) -> StorageProfile:
        if self.when_unmeasurable is Unmeasurable.SKIP and not self.reason:
            raise ValueError("storage verdicts that may be skipped need their declared reason")
        return self


class WholeMachine(Frozen):
    """The capacity arms on every engine instance of a host together (``instances`` ≥ 2: R3's TP4×2)."""

    per_instance_concurrency: Count = Field(ge=1)  # sessions in flight per instance; 1 where it serves one
    rounds: Count = Field(default=3, ge=1)  # measured rounds, each of instances × per-instance turns


class Capacity(Frozen):
    """The capacity arms (R2/R3): sessions of turns over shared documents, without and with the SSD tier.

    Every document is a session; turns visit them round-robin (:mod:`kvgate.probes.agent.sessions`),
    so the set must be past the DRAM tier (the dram-only arm cannot keep it) and inside the
    SSD tier (the ssd-tier arm can): the evidence of each round says whether it was.
    """

    documents: Count = Field(ge=1)  # the shared document set (a multiple of the engine instances)
    prompt_tokens: Tokens | None = Field(default=None, gt=0)  # a turn: its document, then its question
    reuse: float = Field(gt=0, lt=1)  # the declared reuse rate: the share of a turn that is its document
    concurrency: tuple[Level, ...] = Field(min_length=1)  # load levels: sessions in flight
    rounds: Count = Field(default=3, ge=1)  # measured rounds per level, C turns each (warm-up excluded)
    # validity of each round: the dram-only arm reused less than this share of the documents' tokens
    # (else the DRAM tier held the set: not a capacity test), and the SSD tier's device and engine
    # read at least this share of the state bytes of what the ssd-tier arm reused
    max_dram_hit_ratio: float = Field(default=0.5, gt=0, le=1)
    min_tier_read_ratio: float = Field(default=0.5, gt=0, le=1)

    @model_validator(mode="after")
    def _levels(self) -> Capacity:
        if max(self.concurrency) > self.documents:
            raise ValueError(
                f"documents ({self.documents}) must be at least the largest level ({max(self.concurrency)}): "
                "two turns in flight on one document would share it within the round"
            )
        return self


class EngineSettings(Frozen):
    """What the volume arms' engines get beyond their profile: the seed's cache settings, per engine kind."""

    args: tuple[str, ...] = ()  # appended to the launch command (e.g. --no-enable-prefix-caching)
    env: Environment = Field(default_factory=dict)  # e.g. LMCACHE_MAX_LOCAL_CPU_SIZE: "4"


class VolumeComparison(Frozen):
    """R2/R3 as the seed's reports measured them: one engine's SSD tier on each volume, the same load.

    Per volume (the deployment's ``baseline_volume``, then its candidate): a fresh engine of the
    ssd-tier profile with its tier there; ``sessions`` distinct prompts populated one after the
    other; then per level N the engine made cold, the page cache dropped, and sessions 0..N−1
    sent once each as a single wave at concurrency N, every load proven cold on that volume's
    own devices by bytes (:func:`kvgate.orchestration.g3.window.restore_reason`).
    """

    sessions: Count = Field(ge=1)  # distinct sessions populated (R2: 34)
    prompt_tokens: Tokens = Field(gt=0)  # each session's prompt (R2: ≈29.8K tokens)
    max_tokens: Tokens = Field(gt=0)  # output tokens per request (R2: 64)
    populate_max_tokens: Tokens = Field(default=1, gt=0)  # the seed's populate asked for one token
    concurrency: tuple[Level, ...] = Field(min_length=1)  # levels on one engine (R2: 8/16/32)
    whole_machine: tuple[Level, ...] = ()  # levels over every instance together (R3: 16/32 on TP4×2)
    engine: dict[str, EngineSettings] = Field(default_factory=dict)  # engine kind → the seed's settings
    # a gain more than references.FAR_ABOVE times the seed's upper end's speed-up: not comparable
    when_not_comparable: Unmeasurable = Unmeasurable.INVALID
    not_comparable_reason: str = ""
    # False: these arms are never the seed's (a tiny model, a stand-in baseline): every figure is
    # shown with not_comparable_reason and judged against no reference, wherever it lands
    comparable: bool = True

    @model_validator(mode="after")
    def _levels(self) -> VolumeComparison:
        top = max(self.concurrency + self.whole_machine)
        if top > self.sessions:
            raise ValueError(f"sessions ({self.sessions}) must be at least the largest level ({top})")
        skipped = self.when_not_comparable is Unmeasurable.SKIP or not self.comparable
        if skipped and not self.not_comparable_reason:
            raise ValueError("a figure that may be skipped as not comparable needs its declared reason")
        return self


class ColdRead(Frozen):
    """R1: the same cold restore with a serial and with a parallel tier reader (engines.<x>.cold_read)."""

    concurrency: Count = Field(default=16, ge=1)  # R1: concurrency 16
    trials: Count = Field(default=3, ge=3)
    prompt_tokens: Tokens | None = Field(default=None, gt=0)  # None: the profile's prompt_tokens


class G3Profile(Profile):
    """Trial sizes, evidence bounds and verdict bindings of one G3 scale."""

    name: str
    description: str
    trials: Count = Field(ge=3)
    prompt_tokens: Tokens = Field(gt=0)
    max_tokens: Tokens = Field(gt=0)
    prompt_tolerance: float = Field(default=0.05, gt=0, lt=1)
    warm: bool = True
    max_cv: Ratio | None = Field(gt=0)  # None: CV reported, not enforced
    request_timeout_s: Duration = Field(default=600, gt=0)
    # load levels, run where the engine batches requests (orchestration.g3.load_arms): C × waves prompts
    # at concurrency C per trial; none: the conc 8/16 bindings are not measurable
    concurrency: tuple[Level, ...] = ()
    waves: Count = Field(default=1, ge=1)
    load_trials: Count = Field(default=3, ge=3)
    load_prompt_tokens: Tokens | None = Field(default=None, gt=0)  # None: prompt_tokens
    # a deployment whose tier profile has no external KV tier (cache: null) measures recompute
    # and warm only: what its ssd-restore checks become, and why
    when_no_tier: Unmeasurable = Unmeasurable.INVALID
    no_tier_reason: str = ""
    # top-k logprobs asked with every request: an output that differs from recompute's passes
    # correctness only when it first diverges at a near-tie (vLLM's check_logprobs_close)
    logprobs: int = Field(default=5, ge=1, le=20)
    capacity: Capacity | None = None  # None: the capacity bindings (dram-only vs ssd-tier) are not measurable
    whole_machine: WholeMachine | None = None  # None: the whole-machine bindings are not measurable
    cold_read: ColdRead | None = None  # None: the serial vs parallel read bindings are not measurable
    volumes: VolumeComparison | None = (
        None  # None: the baseline vs candidate volume bindings are not measurable
    )
    cold: ColdBounds = Field(default_factory=ColdBounds)
    client: ClientBounds = Field(default_factory=ClientBounds)
    write_through: WriteThrough = Field(default_factory=WriteThrough)
    verdicts: tuple[VerdictBinding, ...] = Field(min_length=1)
    storage: StorageProfile | None = None  # None: G3 does not run model loading and checkpoint

    def reference_ids(self) -> tuple[str, ...]:
        """Every reference this profile binds, in profile order, once each."""
        storage = self.storage.verdicts if self.storage else ()
        return tuple(dict.fromkeys([v.reference for v in self.verdicts] + [s.reference for s in storage]))

    @model_validator(mode="after")
    def _unique(self) -> G3Profile:
        names = [v.check for v in self.verdicts]
        if len(names) != len(set(names)):
            raise ValueError(f"verdict checks must be unique, got {names}")
        for v in self.verdicts:
            missing = [c for c in v.levels if self.capacity and c not in self.capacity.concurrency]
            if v.capacity and missing:
                raise ValueError(f"verdict {v.check}: level(s) {missing} are not in capacity.concurrency")
            if v.volumes and (why := self._volume_levels(v)):
                raise ValueError(f"verdict {v.check}: {why}")
            if v.cold_read and self.cold_read and v.concurrency != self.cold_read.concurrency:
                raise ValueError(
                    f"verdict {v.check}: concurrency {v.concurrency} is not cold_read.concurrency "
                    f"{self.cold_read.concurrency}"
                )
        return self

    def _volume_levels(self, v: VerdictBinding) -> str | None:
        if self.volumes is None:
            return None
        known = self.volumes.whole_machine if v.whole_volumes else self.volumes.concurrency
        missing = [c for c in v.levels if c not in known]
        where = "volumes.whole_machine" if v.whole_volumes else "volumes.concurrency"
        return f"level(s) {missing} are not in {where}" if missing else None

    def verdict(self, check: str) -> VerdictBinding:
        """The binding of one verdict check."""
        for v in self.verdicts:
            if v.check == check:
                return v
        raise KeyError(check)


# by inventory scale ("smoke" or "full"), and from one file; errors name the file and the field
load_g3_profile = functools.partial(load_gate_profile, "g3", model=G3Profile)
read_g3_profile = functools.partial(read_gate_profile, model=G3Profile)
