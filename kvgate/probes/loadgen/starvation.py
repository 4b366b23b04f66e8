"""Was the client starved? Its event loop's lag over a load, and token stamps that came in bunches.

A client that shares a busy host with the engine reads tokens late: SSE events the server wrote
a decode step apart wait in the socket buffer and are stamped microseconds apart once the client
runs, so ITL collapses to the client's parse time and TPOT towards 0 (measured against a loopback
packet capture: with the CPU busy, 64–75 % of tokens reached the client tens of ms late). Two
measures of it are recorded with every load:

- the loop's lag: a task asks to wake every ``TICK_S`` and records how late it woke;
- bunched stamps: the share of inter-token gaps shorter than ``BUNCHED_NS`` — no decode step of a
  real engine is that short, so such a gap is two events read in one go.

:func:`starved_reason` turns them into an INVALID reason against a gate profile's bounds.

>>> from kvgate.probes.loadgen.record import RequestRecord
>>> r = RequestRecord(0, "u", success=True, chunk_ns=[0, 20_000_000, 20_010_000, 40_000_000])
>>> health = client_health([1_000_000] * 98 + [30_000_000] * 2, [r])
>>> health["loop_lag_ms"]["p99"], round(health["bunched_token_share"], 3)
(30.0, 0.333)
>>> starved_reason(health, max_lag_p99_ms=10, max_bunched_share=None)
'the client was starved: its event loop woke up to 30 ms late (p99 over 100 ticks of 5 ms; bound 10 ms)'
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any

from .record import NS_PER_MS, RequestRecord

TICK_S = 0.005
BUNCHED_NS = 100_000  # 0.1 ms between two token events: read together, not generated apart


class LagMonitor:
    """How late the event loop runs a task that asks to wake every ``TICK_S`` (ns per tick)."""

    def __init__(self) -> None:
        self.lags_ns: list[int] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._tick())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _tick(self) -> None:
        while True:
            asked = time.perf_counter_ns()
            await asyncio.sleep(TICK_S)
            self.lags_ns.append(max(0, time.perf_counter_ns() - asked - int(TICK_S * 1e9)))


def client_health(lags_ns: Sequence[int], records: Sequence[RequestRecord]) -> dict[str, Any]:
    """The load's record of its own client: loop lag (ms) and the share of bunched token stamps."""
    lags = sorted(lags_ns)
    gaps = [b - a for r in records if r.success for a, b in zip(r.chunk_ns, r.chunk_ns[1:])]  # noqa: B905 - 3.8
    return {
        "loop_lag_ms": {
            "tick_ms": TICK_S * 1000,
            "samples": len(lags),
            "p50": _ms(lags, 0.50),
            "p99": _ms(lags, 0.99),
            "max": lags[-1] / NS_PER_MS if lags else None,
        },
        "bunched_token_share": sum(g < BUNCHED_NS for g in gaps) / len(gaps) if gaps else None,
        "bunched_below_ms": BUNCHED_NS / NS_PER_MS,
    }


def starved_reason(
    health: dict[str, Any] | None, *, max_lag_p99_ms: float | None, max_bunched_share: float | None
) -> str | None:
    """Why a load's client timings cannot be trusted (its loop lagged, its tokens bunched), or None."""
    if not health:
        return None
    lag, bunched = health["loop_lag_ms"], health["bunched_token_share"]
    reasons = []
    if max_lag_p99_ms is not None and lag["p99"] is not None and lag["p99"] > max_lag_p99_ms:
        reasons.append(
            f"its event loop woke up to {lag['p99']:.3g} ms late (p99 over {lag['samples']} ticks of "
            f"{lag['tick_ms']:.3g} ms; bound {max_lag_p99_ms:.3g} ms)"
        )
    if max_bunched_share is not None and bunched is not None and bunched > max_bunched_share:
        reasons.append(
            f"{bunched:.0%} of its token stamps came < {health['bunched_below_ms']:.3g} ms after the "
            f"previous one, read together rather than generated apart (bound {max_bunched_share:.0%})"
        )
    return f"the client was starved: {'; '.join(reasons)}" if reasons else None


def _ms(sorted_ns: Sequence[int], q: float) -> float | None:
    """The q-quantile (nearest rank) in ms."""
    if not sorted_ns:
        return None
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))] / NS_PER_MS
