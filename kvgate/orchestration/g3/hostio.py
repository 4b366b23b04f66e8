"""What an engine's log says about one measured window: the prompt tokens it restored or reused.

For an engine without a Prometheus hit counter (llama-cpp-python), its own log lines
during the window (:class:`kvgate.orchestration.g3.window.EngineWindow` reads them) are its count.

>>> hit_tokens_llama_cpp("Llama._create_completion: cache hit\\n"
...     "Llama.generate: 1017 prefix-match hit, remaining 1 prompt tokens to eval\\n")
1017
>>> hit_tokens_llama_cpp("Llama._create_completion: cache miss\\n")
0
"""

from __future__ import annotations

import re

from kvgate.transport import Executor

_PREFIX = re.compile(r"Llama\.generate: (\d+) prefix-match hit")


def log_since(ex: Executor, log_path: str, lines: int) -> str:
    """The engine log after its first ``lines`` lines: what the engine said during the window."""
    return ex.run("tail -n +%s %s", lines + 1, log_path, timeout_s=30).stdout


def hit_tokens_llama_cpp(log: str) -> int:
    """Prompt tokens llama-cpp-python restored from its cache during one request (0 on a miss).

    A "cache hit" loads a saved state; the following ``N prefix-match hit`` line says how
    many tokens of that state matched the prompt (the rest was evaluated again).
    """
    if "Llama._create_completion: cache hit" not in log:
        return 0
    return resident_tokens_llama_cpp(log)


def resident_tokens_llama_cpp(log: str) -> int:
    """Prompt tokens llama-cpp-python reused during one request, from a restored or resident state.

    A warm request reuses the state still loaded in the model (no "cache hit" line); the
    ``N prefix-match hit`` line counts what it reused either way.
    """
    found = _PREFIX.findall(log)
    return int(found[-1]) if found else 0


def reused_tokens_llama_cpp(log: str) -> int:
    """Prompt tokens llama-cpp-python reused over every request of a window, restored or resident.

    >>> reused_tokens_llama_cpp("Llama.generate: 700 prefix-match hit, remaining 300 prompt tokens to eval\\n"
    ...     "Llama.generate: 1 prefix-match hit, remaining 999 prompt tokens to eval\\n")
    701
    """
    return sum(int(n) for n in _PREFIX.findall(log))


HIT_PARSERS = {"llama-cpp": hit_tokens_llama_cpp}
RESIDENT_PARSERS = {"llama-cpp": resident_tokens_llama_cpp}
REUSED_PARSERS = {"llama-cpp": reused_tokens_llama_cpp}


def hit_tokens(kind: str, log: str, *, resident: bool = False, per_request: bool = False) -> int | None:
    """The engine's own restored-token count from its log, None when kvgate cannot read it for `kind`.

    ``resident``: count tokens reused from the state the engine still holds (a warm request) too;
    ``per_request``: every request of a window counted (a capacity round), resident or restored.
    """
    parsers = REUSED_PARSERS if per_request else RESIDENT_PARSERS if resident else HIT_PARSERS
    parser = parsers.get(kind)
    return parser(log) if parser else None
