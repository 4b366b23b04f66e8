"""What an engine's log says about one measured window: the prompt tokens it restored or reused.

For an engine without a Prometheus hit counter (llama-cpp-python), its own log lines
during the window (:class:`kvgate.orchestration.g3.window.EngineWindow` reads them) are its count;
the parsers live with the agent (kvgate.probes.agent.engine_log), whose G4 soak counts them too.
"""

from __future__ import annotations

from kvgate.probes.agent import engine_log
from kvgate.transport import Executor


def log_since(ex: Executor, log_path: str, lines: int) -> str:
    """The engine log after its first ``lines`` lines: what the engine said during the window."""
    return ex.run("tail -n +%s %s", lines + 1, log_path, timeout_s=30).stdout


HIT_PARSERS = {"llama-cpp": engine_log.restored_tokens}
RESIDENT_PARSERS = {"llama-cpp": engine_log.resident_tokens}
REUSED_PARSERS = {"llama-cpp": engine_log.reused_tokens}


def hit_tokens(
    log_format: str | None, log: str, *, resident: bool = False, per_request: bool = False
) -> int | None:
    """The engine's own restored-token count from its log (its profile's hit_log), None without one.

    ``resident``: count tokens reused from the state the engine still holds (a warm request) too;
    ``per_request``: every request of a window counted (a capacity round), resident or restored.
    """
    parsers = REUSED_PARSERS if per_request else RESIDENT_PARSERS if resident else HIT_PARSERS
    parser = parsers.get(log_format or "")
    return parser(log) if parser else None
