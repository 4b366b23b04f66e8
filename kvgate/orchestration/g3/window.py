"""One measured load on one or more engines, bracketed by every counter G3 trusts.

Around the load: the candidate volume's devices (or NFS client) and every engine's
process tree or cgroup (one evidence snapshot on the host, :mod:`kvgate.probes.evidence`),
each engine's own hit counter and TTFT histogram (its /metrics), and, for an engine
without a hit counter, what its log says it restored. ``restore_reason`` then says why
a restore cannot count as served cold by the SSD tier, in the evidence module's words.
"""

from __future__ import annotations

from typing import Any

from kvgate.configuration.gate_profiles import ColdBounds
from kvgate.orchestration.g3 import hostio
from kvgate.probes.engines import (
    EngineService,
    Histogram,
    MetricsError,
    diff,
    engines_latency,
    histograms,
    scrape,
)
from kvgate.probes.evidence import Counts, Resolved, cold_reason
from kvgate.probes.hostevidence import HostEvidence
from kvgate.transport import Executor


class Bracket:
    """One engine's hit counter and TTFT histogram (its /metrics) around one measured load."""

    def __init__(self, ex: Executor, eng: EngineService, *, resident: bool = False) -> None:
        """``resident``: a warm load, counted by the profile's warm hit counter."""
        self.ex, self.eng = ex, eng
        self.counter = eng.profile.counter(resident=resident)

    def _scrape(self) -> Any:
        if self.eng.profile.metrics is None or not (self.counter or self.eng.profile.ttft_histogram):
            return None
        try:
            return scrape(self.ex, self.eng.placement.python, self.eng.url(self.eng.profile.metrics.path))
        except MetricsError:
            return None

    def __enter__(self) -> Bracket:
        self._m0 = self._scrape()
        return self

    def __exit__(self, *exc: object) -> None:
        m1 = self._scrape()
        self.hit_tokens: int | None = None
        self.server_ttft: Histogram | None = None
        self.latency: dict[
            str, Histogram
        ] = {}  # the engine's own TTFT, ITL, TPOT (kvgate.probes.engines.latency)
        if self._m0 is not None and m1 is not None:
            window = diff(self._m0, m1)
            self.latency = histograms(window, self.eng.profile)
            if self.counter:
                name, labels = self.counter
                try:
                    self.hit_tokens = int(window.value(name, **labels))
                except (MetricsError, KeyError):
                    self.hit_tokens = None
            if self.eng.profile.ttft_histogram:
                try:
                    self.server_ttft = window.histogram(self.eng.profile.ttft_histogram)
                except MetricsError:
                    self.server_ttft = None

    @property
    def server_ttft_mean_s(self) -> float | None:
        """The engine's own mean TTFT over the window (its histogram's sum / count)."""
        h = self.server_ttft
        return h.sum / h.count if h is not None and h.count > 0 else None


class EngineWindow:
    """Counters around one load on ``engines``; read ``counts``, ``hit_tokens`` and ``server_ttft_mean_s``."""

    def __init__(
        self,
        he: HostEvidence,
        volume: Resolved | None,
        engines: list[EngineService],
        *,
        resident: bool = False,
        per_request: bool = False,
    ) -> None:
        """``resident``: a warm load, whose hits come from state the engines still hold;
        ``per_request``: the hits of every request of the load summed, from wherever they came."""
        self.he, self.volume, self.engines, self.resident = he, volume, engines, resident
        self.per_request = per_request
        self.counts: Counts | None = None
        self.hit_tokens: int | None = None
        self.server_ttft_mean_s: float | None = None
        self.server_latency: dict[str, float] | None = None  # the engines' own TTFT/ITL/TPOT, ms
        self.logs: list[str] = []  # what each engine logged during the window (evidence)

    def _snapshot(self) -> dict[str, object]:
        leaders = tuple(e.evidence_target for e in self.engines)
        logs = tuple(e.log_path for e in self.engines)
        return self.he.snapshot(self.volume, engines=leaders, count_lines=logs)

    def __enter__(self) -> EngineWindow:
        self._brackets = [Bracket(self.he.ex, e, resident=self.resident).__enter__() for e in self.engines]
        self._before = self._snapshot()
        return self

    def __exit__(self, *exc: object) -> None:
        after = self._snapshot()
        self.counts = Counts.between(self._before, after)
        lines: dict[str, int] = self._before["lines"]  # type: ignore[assignment]
        hits: list[int | None] = []
        for eng, bracket in zip(self.engines, self._brackets, strict=True):
            bracket.__exit__(None, None, None)
            self.logs.append(hostio.log_since(self.he.ex, eng.log_path, lines[eng.log_path]))
            if bracket.counter:
                hits.append(bracket.hit_tokens)
            else:
                log_format, log = eng.profile.hit_log, self.logs[-1]
                hits.append(
                    hostio.hit_tokens(log_format, log, resident=self.resident, per_request=self.per_request)
                )
        self.hit_tokens = None if None in hits else sum(h or 0 for h in hits)
        self.server_latency = engines_latency([b.latency for b in self._brackets])
        ttft = [b.server_ttft for b in self._brackets]
        if ttft and None not in ttft and sum(h.count for h in ttft if h) > 0:
            self.server_ttft_mean_s = sum(h.sum for h in ttft if h) / sum(h.count for h in ttft if h)

    @property
    def device_read_bytes(self) -> int | None:
        return self.counts.device_read_bytes if self.counts else None

    @property
    def engine_read_bytes(self) -> int | None:
        return self.counts.engine_read_bytes if self.counts else None


def restore_reason(
    bounds: ColdBounds,
    counts: Counts,
    *,
    predicted_bytes: int,
    prompt_tokens: int,
    hit_tokens: int | None,
    caches_dropped: bool,
) -> str | None:
    """Why a restore cannot count as served cold from the SSD tier; None when every counter agrees.

    >>> from kvgate.configuration.gate_profiles.g3 import ColdBounds
    >>> c = Counts(device_read_bytes=50, device_written_bytes=0, engine_read_bytes=1200, counted_on="vda")
    >>> restore_reason(ColdBounds(), c, predicted_bytes=1000, prompt_tokens=10, hit_tokens=10,
    ...                caches_dropped=True)
    'not cold: vda read 50 B of the 1000 B the restore needed (5% < 90%)'
    """
    reasons = [
        cold_reason(
            counts,
            needed_bytes=predicted_bytes,
            what="restore",
            caches_dropped=caches_dropped,
            engines=True,
            min_ratio=bounds.min_read_ratio,
        )
    ]
    if hit_tokens is not None and hit_tokens < bounds.min_hit_ratio * prompt_tokens:
        share = f"{hit_tokens / prompt_tokens:.0%}" if prompt_tokens else "n/a"
        reasons.append(
            f"the engine restored {hit_tokens} of {prompt_tokens} prompt tokens from its tier "
            f"({share} < {bounds.min_hit_ratio:.0%}): the rest was recomputed"
        )
    return "; ".join(r for r in reasons if r) or None


def cold_load_reason(
    w: EngineWindow, bounds: ColdBounds, tokens: int | None, *, bytes_per_token: int, dropped: bool
) -> str | None:
    """Why a restore load over ``w`` cannot count as served cold from the SSD (unknown tokens: unproven)."""
    if tokens is None:
        return "prompt tokens unknown (no tokenizer endpoint for this engine): cold not proven"
    assert w.counts is not None
    return restore_reason(
        bounds,
        w.counts,
        predicted_bytes=tokens * bytes_per_token,
        prompt_tokens=tokens,
        hit_tokens=w.hit_tokens,
        caches_dropped=dropped,
    )
