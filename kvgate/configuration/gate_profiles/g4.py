"""The G4 gate profile (``workloads/g4/<scale>.yaml``, or the inventory's ``g4_profile``): how long,
what load, and the soak's limits.

>>> p = load_g4_profile("full")
>>> p.duration_s // 3600, p.limits.max_failed_requests
(72, 0)
"""

from __future__ import annotations

import functools
from typing import Literal

from pydantic import Field, model_validator

from kvgate.base.config_file import Frozen
from kvgate.configuration.bounds import (
    Bytes,
    Celsius,
    Count,
    Duration,
    Events,
    Gib,
    Percent,
    Ratio,
    Seconds,
    Tokens,
)
from kvgate.configuration.gate_profiles.loader import Profile, load_gate_profile, read_gate_profile


class SoakLoad(Frozen):
    """The mixed load of every window."""

    concurrency: Count = Field(ge=1)  # requests in flight per batch (all engine instances together)
    prompt_tokens: Tokens = Field(ge=16)
    max_tokens: Tokens = Field(ge=1)
    reuse: float = Field(ge=0, le=1)  # fraction of requests that are a turn on a shared document
    documents: Count = Field(ge=1)  # shared documents (size the set past the DRAM tier on a lab)
    prefix_share: float = Field(ge=0, le=1)  # fraction of a reuse prompt that is its document
    request_timeout_s: Duration = Field(default=600, gt=0)


class Canary(Frozen):
    """The correctness probe: the same greedy prompts every window."""

    prompts: Count = Field(ge=0)
    max_tokens: Tokens = Field(ge=1)
    logprobs: int = Field(default=5, ge=1, le=20)  # top-k, so a near-tie is told from a corruption


class Integrity(Frozen):
    """The integrity load beside the engines (kvgate.probes.agent.integrity): its sizes and its share.

    Per cycle it reads and writes ``bytes_per_cycle``; on average, and in every burst (fio's
    ``rate``, the agent's pacing), at most ``max_bytes_per_s`` of the candidate device, so the
    engines' load stays what the site asked.
    """

    cycle_s: Seconds = Field(ge=1)
    max_bytes_per_s: Bytes = Field(ge=1 << 20)  # the device share: reads + writes, per second
    fio_bytes: Bytes = Field(ge=1 << 20)  # fio's verified file (crc32c per block)
    fio_block_bytes: int = Field(default=65536, ge=4096, le=1 << 30, multiple_of=4096)
    checkpoint_bytes: Bytes = Field(ge=4096, multiple_of=4096)  # written, fsynced, read back every cycle
    kv_chunk_bytes: int = Field(ge=4096, le=1 << 30, multiple_of=4096)
    kv_chunks: Count = Field(ge=1)  # written once, restored and compared every cycle
    checksum: Literal["crc32", "sha256", "blake2b"] = "crc32"  # checkpoint and KV cells (fio: crc32c)

    @property
    def bytes_per_cycle(self) -> int:
        """fio: verify at rest, write, read back; checkpoint: write, read back; KV: restore."""
        return 3 * self.fio_bytes + 2 * self.checkpoint_bytes + self.kv_chunks * self.kv_chunk_bytes

    @model_validator(mode="after")
    def _fits_its_share(self) -> Integrity:
        need = self.bytes_per_cycle / self.cycle_s
        if need > self.max_bytes_per_s:
            raise ValueError(
                f"a cycle moves {self.bytes_per_cycle} bytes: {need:.0f} B/s over cycle_s {self.cycle_s} "
                f"is more than max_bytes_per_s {self.max_bytes_per_s} (the integrity load's device share)"
            )
        return self


class Health(Frozen):
    """Device health and kernel limits over a soak (kvgate.orchestration.g4.health), judged as deltas."""

    snapshot_s: Seconds = Field(
        default=3600, ge=10
    )  # SMART, paths, NIC counters: at start, this often, at end
    max_media_errors: Events = Field(default=0, ge=0)  # NVMe media and data-integrity errors, added
    max_temperature_c: Celsius = Field(default=70, gt=0)  # the hottest any drive got (the warning: never)
    max_percentage_used_increase: Percent = Field(default=1, ge=0)  # NVMe wear, in points
    max_error_log_entries: Events = Field(default=0, ge=0)  # NVMe error-log entries, added
    max_pause_frames: Events = Field(ge=0)  # NIC pause frames, added (PFC: the fabric's normal is the site's)
    max_cnp: Events = Field(ge=0)  # congestion notification packets, added (DCQCN)
    max_discards: Events = Field(default=0, ge=0)
    max_out_of_buffer: Events = Field(default=0, ge=0)
    max_path_changes: Events = Field(default=0, ge=0)  # NVMe-oF path or ANA state changes
    max_kernel_log_lines: Events = Field(
        default=0, ge=0
    )  # NVMe, NVMe-oF, RDMA, multipath, I/O, hung task, OOM


class Limits(Frozen):
    """What the soak must hold: the site's rules, judged over the windows."""

    baseline_windows: Count = Field(ge=1)  # the first (after warm-up) and last this many windows compared
    warmup_windows: Count = Field(ge=0)  # not part of the trends (caches filling, engine warming up)
    min_coverage: float = Field(gt=0, le=1)  # windows' span / duration
    max_failed_requests: Events = Field(ge=0)
    max_empty_responses: Events = Field(ge=0)  # HTTP 200 with no token: a silent failure
    # drift, as slopes per hour over every window after warm-up (kvgate.orchestration.g4.drift), judged
    # only on a soak at least this long: minutes of a warming engine say nothing of an hourly rate
    min_slope_span_s: Seconds = Field(default=3600, ge=0)
    max_ttft_p99_growth_per_h: Ratio = Field(ge=0)  # TTFT p99 growth, a share of the first windows' per hour
    max_throughput_loss_per_h: Ratio = Field(
        ge=0
    )  # output tok/s loss, a share of the first windows' per hour
    max_rss_growth_mib_per_h: Gib = Field(ge=0)  # engines' RSS growth, MiB per hour
    min_hit_retention: float = Field(gt=0, le=1)  # last / first hit ratio: the tier keeps serving


class G4Profile(Profile):
    name: str
    description: str = ""
    duration_s: Seconds = Field(ge=10)
    window_s: Seconds = Field(ge=1)
    poll_s: Duration = Field(default=5, gt=0)  # how often the controller reads the soak's events
    load: SoakLoad
    canary: Canary
    limits: Limits
    integrity: Integrity
    health: Health

    @model_validator(mode="after")
    def _windows_fit(self) -> G4Profile:
        needed = self.needed_windows
        if self.duration_s < needed * self.window_s:
            raise ValueError(
                f"duration_s {self.duration_s} holds fewer than warmup_windows + 2 × baseline_windows "
                f"= {needed} windows of {self.window_s} s"
            )
        return self

    @property
    def needed_windows(self) -> int:
        """The windows the trends are judged on: warm-up, then the first and last baselines."""
        return self.limits.warmup_windows + 2 * self.limits.baseline_windows

    @property
    def planned_windows(self) -> int:
        return self.duration_s // self.window_s

    def too_short_for_slopes(self) -> str | None:
        """Why this soak is too short to judge a drift slope (its figures are still shown), or None."""
        if self.duration_s >= self.limits.min_slope_span_s:
            return None
        return (
            f"not judged at this soak length: {self.duration_s} s cannot establish an hourly slope "
            f"(drift is judged on soaks of at least {self.limits.min_slope_span_s} s); "
            "the slopes are shown in the report, not judged"
        )


# by name (the inventory's scale or g4_profile), from one file; errors name the file and the field
load_g4_profile = functools.partial(load_gate_profile, "g4", model=G4Profile)
read_g4_profile = functools.partial(read_gate_profile, model=G4Profile)
