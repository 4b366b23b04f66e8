"""Command line of the agent: run one workload, with its state in a directory the controller polls.

Exit codes (also written to ``exit_code``): 0 the workload ran to the end (its
result may still show corruption: the agent measures, the judge decides),
1 it failed, 2 the spec was refused, 143 it was cancelled (SIGTERM/SIGINT).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

from kvgate.probes.agent import AGENT_VERSION
from kvgate.probes.agent.events import Cancelled, EventLog, Heartbeat, write_pid
from kvgate.probes.agent.spec import SpecError

EXIT_OK, EXIT_FAILED, EXIT_SPEC, EXIT_CANCELLED = 0, 1, 2, 143
if TYPE_CHECKING:  # the alias is for the type checker only: python 3.8 cannot subscript dict
    from collections.abc import Callable

    Workload = Callable[[Any, EventLog, threading.Event], dict[str, Any]]


def workloads() -> dict[str, Workload]:
    """Workload name → its ``run(spec, log, stop)``; imported lazily."""
    from kvgate.probes.agent import checkpoint, integrity, kv_restore, model_load, soak

    return {
        "kv-restore": kv_restore.run,
        "model-load": model_load.run,
        "checkpoint": checkpoint.run,
        "soak": soak.run,
        "integrity": integrity.run,
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """``<workload> --spec FILE --state-dir DIR``."""
    parser = argparse.ArgumentParser(prog="agent.pyz", description=__doc__)
    parser.add_argument("workload", choices=sorted(workloads()))
    parser.add_argument("--spec", required=True, help="the workload spec (JSON)")
    parser.add_argument("--state-dir", required=True, help="where events.jsonl, result.json, exit_code go")
    return parser.parse_args(argv)


def install_signals(stop: threading.Event) -> None:
    """SIGTERM/SIGINT set ``stop`` and raise Cancelled in the main thread; SIGHUP is ignored."""

    def handler(signum: int, _frame: Any) -> None:
        stop.set()
        raise Cancelled(f"received signal {signum}")

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def header(workload: str) -> dict[str, Any]:
    """Who ran: agent version, python, host, pid."""
    return {
        "workload": workload,
        "agent_version": AGENT_VERSION,
        "python_version": platform.python_version(),
        "hostname": platform.node(),
        "kernel": platform.release(),
        "pid": os.getpid(),
        "uid": os.getuid(),
    }


def execute(
    workload: str, spec_path: str, log: EventLog, stop: threading.Event
) -> tuple[dict[str, Any], int]:
    """Run the workload; map every outcome to (result fields, exit code)."""
    try:
        with open(spec_path) as f:
            spec = json.load(f)
        labels = spec.get("labels") if isinstance(spec, dict) else None
        return {"status": "ok", "labels": labels, **workloads()[workload](spec, log, stop)}, EXIT_OK
    except SpecError as exc:
        return {"status": "invalid-spec", "error": str(exc)}, EXIT_SPEC
    except Cancelled as exc:
        return {"status": "cancelled", "error": str(exc)}, EXIT_CANCELLED
    except Exception as exc:
        tail = traceback.format_exc().strip().splitlines()[-12:]
        return {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "traceback": tail}, EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    """Run one workload with its state directory (or one evidence command); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["evidence"]:  # a quick answer for the controller, not a detached workload
        from kvgate.probes.evidence import main as evidence

        return evidence(argv[1:])
    args = parse_args(argv)
    state = os.path.abspath(args.state_dir)
    os.makedirs(state, exist_ok=True)
    beat = Heartbeat(state).start()  # before the pid file: the launcher returns once that exists
    write_pid(state)
    stop = threading.Event()
    install_signals(stop)
    log = EventLog(state)
    start = time.monotonic()
    info = header(args.workload)
    log.emit("start", **info)
    try:
        fields, code = execute(args.workload, args.spec, log, stop)
    except Cancelled as exc:  # a signal landed outside the workload's own handling
        fields, code = {"status": "cancelled", "error": str(exc)}, EXIT_CANCELLED
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the result must get written
    beat.stop()
    log.finish({**info, **fields, "exit_code": code, "elapsed_s": time.monotonic() - start}, code)
    return code


if __name__ == "__main__":
    sys.exit(main())
