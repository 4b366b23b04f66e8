"""Measure every engine deployment of an inventory: hosts at once, a host's deployments in turn.

G3 and G4 both do this: each engine host runs its deployments one after the other
(they may share its GPUs), all hosts concurrently (`fan_out`). A deployment whose
measurement raised a LabError keeps it as its result (its checks become ERROR);
the host's other deployments still run. Ctrl-C (Interrupted) stops everything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from kvgate.base.errors import Interrupted, LabError
from kvgate.configuration.inventory import CLUSTER, Inventory
from kvgate.transport import fan_out

R = TypeVar("R")
Notify = Callable[[str], None]


class Progress(Protocol):
    """Which hosts still have checks to measure, and where a host's progress is shown (a GateSession)."""

    @property
    def hosts_pending(self) -> set[str]: ...

    def notify(self, host: str, event: str) -> None: ...


def measure_deployments(
    inv: Inventory, session: Progress, measure: Callable[[str, str, Notify], R], *, done: str
) -> dict[str, dict[str, R | LabError] | LabError]:
    """``measure(host, deployment, notify)`` for every pending engine host and its deployments."""

    def on_host(host: str) -> dict[str, R | LabError]:
        out: dict[str, R | LabError] = {}
        for name in inv.engines:
            if host not in inv.engine_hosts(name):
                continue
            notify: Notify = lambda e: session.notify(host, e)  # noqa: E731 - a one-line callback
            try:
                out[name] = measure(host, name, notify)
            except Interrupted:
                raise
            except LabError as exc:
                out[name] = exc
                notify(f"{name}: ERROR: {str(exc).splitlines()[0]}")
        return out

    hosts = sorted(h for h in session.hosts_pending if h != CLUSTER)
    results = fan_out({h: h for h in hosts}, on_host, max_workers=inv.max_parallel_hosts)
    for host, r in results.items():
        session.notify(host, done if not isinstance(r, LabError) else f"ERROR: {r}")
    return results


def deployment_result(
    measured: dict[str, dict[str, R | LabError] | LabError], host: str, deployment: str, what: str
) -> R:
    """One deployment's result; a host or deployment that failed raises its LabError (checks: ERROR)."""
    result = measured[host]
    if isinstance(result, LabError):
        raise LabError(f"{host}: {what}: {result}") from result
    r = result[deployment]
    if isinstance(r, LabError):
        raise LabError(f"{host}/{deployment}: {what}: {r}") from r
    return r
