"""The G4 gate profile (``workloads/g4/<scale>.yaml``): how long, what load, and the soak's limits.

>>> p = load_g4_profile("full")
>>> p.duration_s // 3600, p.limits.max_failed_requests
(72, 0)
"""

from __future__ import annotations

import functools

from pydantic import Field, model_validator

from kvgate.base.config_file import Frozen
from kvgate.configuration.gate_profiles.loader import Profile, load_gate_profile, read_gate_profile


class SoakLoad(Frozen):
    """The mixed load of every window."""

    concurrency: int = Field(ge=1)  # requests in flight per batch (all engine instances together)
    prompt_tokens: int = Field(ge=16)
    max_tokens: int = Field(ge=1)
    reuse: float = Field(ge=0, le=1)  # fraction of requests that are a turn on a shared document
    documents: int = Field(ge=1)  # shared documents (size the set past the DRAM tier on a lab)
    prefix_share: float = Field(ge=0, le=1)  # fraction of a reuse prompt that is its document
    request_timeout_s: float = Field(default=600, gt=0)


class Canary(Frozen):
    """The correctness probe: the same greedy prompts every window."""

    prompts: int = Field(ge=0)
    max_tokens: int = Field(ge=1)
    logprobs: int = Field(default=5, ge=1)  # top-k, so a near-tie is told from a corruption


class Limits(Frozen):
    """What the soak must hold: the site's rules, judged over the windows."""

    baseline_windows: int = Field(ge=1)  # the first (after warm-up) and last this many windows compared
    warmup_windows: int = Field(ge=0)  # not part of the trends (caches filling, engine warming up)
    min_coverage: float = Field(gt=0, le=1)  # windows' span / duration
    max_failed_requests: int = Field(ge=0)
    max_empty_responses: int = Field(ge=0)  # HTTP 200 with no token: a silent failure
    max_ttft_p50_ratio: float = Field(ge=1)  # last / first TTFT p50
    min_throughput_retention: float = Field(gt=0, le=1)  # last / first output tok/s
    max_rss_growth_mib: float = Field(ge=0)  # engines' RSS, last − first (after warm-up)
    min_hit_retention: float = Field(gt=0, le=1)  # last / first hit ratio: the tier keeps serving


class G4Profile(Profile):
    name: str
    description: str = ""
    duration_s: int = Field(ge=10)
    window_s: int = Field(ge=1)
    poll_s: float = Field(default=5, gt=0)  # how often the controller reads the soak's events
    load: SoakLoad
    canary: Canary
    limits: Limits

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


# by inventory scale ("smoke" or "full"), and from one file; errors name the file and the field
load_g4_profile = functools.partial(load_gate_profile, "g4", model=G4Profile)
read_g4_profile = functools.partial(read_gate_profile, model=G4Profile)
