"""Waivers: a named approver accepts a FAIL or INVALID check, with a reason.

# waivers.yaml
waivers:
  - rule: G1-NVME-4            # or check: "gpu-1/nvme[nvme0].temperature"
    hosts: ["gpu-*"]           # fnmatch patterns; default: every host
    reason: "array firmware update scheduled for 2027-01; temperature alarm known"
    approver: "J. Doe <jdoe@example.com>"
    expires: 2027-01-31        # optional; an expired waiver no longer applies

A waiver that matches no check of a run (a typo in its rule, check or hosts, or expired) is named
after the run; ``--strict`` makes it exit 4.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

from pydantic import Field, model_validator

from kvgate.base.config_file import Frozen, load_model
from kvgate.base.criteria import Judgement, Verdict


class Waiver(Frozen):
    rule: str | None = None
    check: str | None = None  # "<host>/<check id>"
    hosts: tuple[str, ...] = ("*",)
    reason: str = Field(min_length=10)
    approver: str = Field(min_length=3)
    expires: date | None = None

    @model_validator(mode="after")
    def _target(self) -> Waiver:
        if not (self.rule or self.check):
            raise ValueError("a waiver needs `rule` or `check` to say what it waives")
        return self

    def matches(self, host: str, check: str, rule: str, today: date) -> bool:
        if self.expires is not None and today > self.expires:
            return False
        if self.check is not None and self.check != f"{host}/{check}":
            return False
        if self.rule is not None and self.rule != rule:
            return False
        return any(fnmatch.fnmatch(host, pattern) for pattern in self.hosts)

    def label(self) -> str:
        """How a message names this waiver: what it targets, on which hosts."""
        target = f"check {self.check}" if self.check else f"rule {self.rule}"
        hosts = "" if self.hosts == ("*",) else f" on {', '.join(self.hosts)}"
        return target + hosts + (f" (expires {self.expires})" if self.expires else "")


class Waivers(Frozen):
    waivers: tuple[Waiver, ...] = ()

    def unmatched(self, checks: Iterable[tuple[str, str, str]], on: date | None = None) -> list[Waiver]:
        """Waivers matching none of a run's (host, check, rule) on day ``on`` (today): a typo, or expired."""
        day, seen = on or datetime.now(UTC).date(), list(checks)
        return [w for w in self.waivers if not any(w.matches(h, c, r, day) for h, c, r in seen)]

    def apply(self, host: str, check: str, j: Judgement) -> tuple[Judgement, dict[str, str] | None]:
        """FAIL/INVALID → WAIVED when a waiver matches; returns the waiver applied."""
        if j.verdict not in (Verdict.FAIL, Verdict.INVALID):
            return j, None
        today = datetime.now(UTC).date()
        for w in self.waivers:
            if w.matches(host, check, j.criterion.rule, today):
                waived = replace(j, verdict=Verdict.WAIVED, condition=f"{j.condition} [was {j.verdict}]")
                return waived, {"reason": w.reason, "approver": w.approver, "was": str(j.verdict)}
        return j, None


def load_waivers(path: str | Path | None) -> Waivers:
    """No file: no waivers."""
    return Waivers() if path is None else load_model(Path(path), Waivers)
