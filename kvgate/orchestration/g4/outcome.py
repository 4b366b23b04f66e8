"""What one deployment's soak measured: its windows, the agent's outcome, health and integrity → SoakResult.

The soak itself (engines, the agent job, following it) is :mod:`kvgate.orchestration.g4.soak`;
here a finished soak, as the controller followed it, becomes the measurements its checks judge,
each stored as evidence first.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from kvgate.base.criteria import Inputs, Measurement
from kvgate.configuration.engine_profile import EngineProfile
from kvgate.configuration.gate_profiles import G4Profile
from kvgate.orchestration.g4 import drift, health, integrity, trends
from kvgate.record import RunStore
from kvgate.transport import Executor


@dataclass
class SoakResult:
    """What G4 measured for one deployment on one host."""

    host: str
    deployment: str
    tier: EngineProfile
    soak: trends.Soak
    measurements: dict[str, Measurement] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)  # check key → first error / mismatch
    near_ties: list[str] = field(default_factory=list)
    engine_log_tails: list[str] = field(default_factory=list)
    integrity: dict[str, Any] = field(default_factory=dict)  # kvgate.record.IntegrityFigures, as JSON
    drift: list[dict[str, Any]] = field(default_factory=list)  # kvgate.record.DriftFigure, as JSON
    health: dict[str, Any] = field(default_factory=dict)  # kvgate.record.HealthFigures, as JSON
    blocked: dict[str, str] = field(default_factory=dict)  # check key → what this host has none of
    model: str = ""  # what the deployment served (kvgate.probes.engines.describe_model)

    def inputs(self, key: str) -> Inputs:
        """What the check ``key`` is judged on: the measurements, its detail, what blocks it."""
        return Inputs(self.measurements, detail=self.details.get(key, ""), blocked=self.blocked.get(key, ""))


@dataclass(frozen=True)
class Soaked:
    """One finished soak of one deployment on one host, as the controller followed it."""

    ex: Executor
    store: RunStore
    host: str
    deployment: str
    tier: EngineProfile
    profile: G4Profile
    sudo: bool
    volume: str  # the candidate volume the soak and its integrity load ran on
    engines: int  # engine instances soaked together
    cap_bytes: int | None  # one engine's tier capacity (every rank); None: not declared
    windows: tuple[dict[str, Any], ...]  # in order
    outcome: dict[str, Any]  # the agent's result
    tails: list[str]  # each engine log's last lines
    checked: integrity.Followed

    def artifact(self, name: str, text: str) -> str:
        return self.store.artifact(self.host, f"g4/{self.deployment}/{name}", text)


def measure(s: Soaked) -> SoakResult:
    """Every measurement G4 judges for the soak, its windows and outcome stored as evidence first."""
    doc = "".join(json.dumps(w) + "\n" for w in s.windows)
    ev = (s.artifact("windows.jsonl", doc), s.artifact("soak-result.json", json.dumps(s.outcome, indent=1)))
    ended = str(s.outcome.get("ended", s.outcome.get("status")))
    cap = None if s.cap_bytes is None else s.cap_bytes * s.engines
    soak = trends.Soak(s.windows, s.profile.duration_s, s.engines, cap, ev, ended)
    result = SoakResult(s.host, s.deployment, s.tier, soak, engine_log_tails=s.tails)
    canary, bad, ties = trends.canary_mismatches(soak)
    result.near_ties = ties
    p = s.profile
    result.measurements = {
        "coverage": trends.coverage(soak),
        "failed-requests": trends.failed_requests(soak),
        "empty-responses": trends.empty_responses(soak),
        "engines-up": trends.engine_deaths(soak),
        "canary": canary,
        "cache-capacity": trends.cache_peak(soak),
        "hit-retention": trends.hit_retention(soak, p),
    }
    result.drift = drift.drift(s.windows, p, soak.cap_bytes)
    result.measurements |= {f["key"]: drift.measurement(f, ev) for f in result.drift}
    no_tier = "no tier size was sampled against a capacity (no tier directory or no cache.capacity_bytes)"
    result.measurements.setdefault(
        "tier-growth", Measurement("tier_cap_share_at_72h", None, "x", ev, no_tier)
    )
    _judge_health(s, result)
    fig = integrity.figures(s.checked, s.windows, volume=s.volume, share=p.integrity.max_bytes_per_s)
    cycles = "".join(json.dumps(c) + "\n" for c in s.checked.cycles)
    result.integrity = fig
    result.measurements |= integrity.measurements(fig, (s.artifact("integrity.jsonl", cycles),))
    result.details = _details(soak, bad, s.tails, s.outcome) | integrity.details(fig, s.host)
    data = {k: asdict(m) for k, m in result.measurements.items()}
    s.artifact("measurements.json", json.dumps(data, indent=1, default=str))
    return result


def _judge_health(s: Soaked, result: SoakResult) -> None:
    """Health deltas over the snapshots and the kernel log of the soak's window."""
    snaps = health.stored(s.store.path, s.host, s.deployment)
    since = s.windows[0]["start_unix_s"] if s.windows else (snaps[0]["time_unix_s"] if snaps else time.time())
    log = health.with_windows(health.kernel(s.ex, since=since, until=time.time(), sudo=s.sudo), s.windows)
    ev = (s.artifact("kernel-log.json", json.dumps(log, indent=1)),)
    values, said = health.judged(snaps, log)
    result.measurements |= health.measurements(values, log, ev, said)
    result.blocked = said
    result.health = health.figures(snaps, log, values, said)


def _details(soak: trends.Soak, bad: list[str], tails: list[str], outcome: dict[str, Any]) -> dict[str, str]:
    """The first error, mismatch or death, shown with a verdict that is not PASS."""
    out = {}
    errors = [e for w in soak.windows for e in (w["summary"]["error_counts"] or {})]
    if errors:
        out["failed-requests"] = f"first error: {errors[0][:300]}"
    if bad:
        out["canary"] = f"first mismatch: {bad[0]}"
    died = [w["index"] for w in soak.windows if w["engines_alive"] < soak.engines]
    if died:
        out["engines-up"] = f"after window {died[0]}; engine log tail: {tails[0][-600:] if tails else '?'}"
    if outcome.get("status") != "ok" or outcome.get("ended") != "duration":
        why = outcome.get("ended") or outcome.get("status")
        out["coverage"] = f"the soak ended: {why} {outcome.get('error') or ''}".strip()
    return out
