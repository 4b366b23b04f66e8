"""Run one function on many hosts at once; each host gets its own entry, success or LabError.

Like fabric's ``GroupResult``: a dead host never hides the others' results, so the
report can name every failing node. Only lab failures (`LabError`) become entries;
any other exception is a bug and propagates, after every host has finished.

>>> from kvgate.transport.local import LocalExecutor
>>> results = fan_out({"a": LocalExecutor("a"), "b": LocalExecutor("b")}, lambda ex: ex.run("true").ok)
>>> results
{'a': True, 'b': True}
>>> failed(results)
{}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

from kvgate.base.errors import LabError
from kvgate.transport.base import CANCEL

T = TypeVar("T")
R = TypeVar("R")

# after Ctrl-C, how long the hosts' threads get to wind down (their commands are killed at once),
# so none of them writes to the run after it was closed
STOP_GRACE_S = 10.0
WAKE_S = 1.0


def fan_out(
    executors: Mapping[str, T], fn: Callable[[T], R], *, max_workers: int | None = None
) -> dict[str, R | LabError]:
    """Call ``fn(executor)`` for every host concurrently; results keyed like ``executors``, in its order.

    Every host at once unless ``max_workers`` (the inventory's ``max_parallel_hosts``) says fewer:
    a cap below the host count runs a rack in waves (issue 27: 64 hosts in 4 waves of 16).
    """
    if not executors:
        return {}
    workers = min(max_workers or len(executors), len(executors))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fan_out")
    futures: dict[str, Future[R]] = {}
    try:
        futures.update((name, pool.submit(fn, ex)) for name, ex in executors.items())
        pending = set(futures.values())
        while pending:  # in slices: Python runs a signal's handler in the main thread only when it
            # wakes, and the kernel may deliver Ctrl-C to a host's thread instead
            pending = wait(pending, timeout=WAKE_S).not_done
    except BaseException as exc:  # Ctrl-C: start no queued host, end the running ones' commands
        pool.shutdown(wait=False, cancel_futures=True)
        if isinstance(exc, KeyboardInterrupt):  # ... and let them finish before the run is closed
            CANCEL.cancel()
            wait(futures.values(), timeout=STOP_GRACE_S)
        raise
    pool.shutdown()
    results: dict[str, R | LabError] = {}
    for name, future in futures.items():
        outcome = _outcome(name, future)
        results[name] = outcome
    return results


def _outcome(name: str, future: Future[R]) -> R | LabError:
    """The host's result or its LabError; any other exception is re-raised, naming the host."""
    exc = future.exception()
    if exc is None:
        return future.result()
    if isinstance(exc, LabError):
        return exc
    exc.add_note(f"raised by fan_out on host {name!r}")
    raise exc


def failed(results: Mapping[str, R | LabError]) -> dict[str, LabError]:
    """The hosts whose entry is a LabError."""
    return {name: r for name, r in results.items() if isinstance(r, LabError)}
