"""The ports an engine deployment's engines listen on: each engine in a slot of its own range.

An engine opens its serving port and, from ``port + API_PORT_OFFSET``, LMCache's internal API server:
its scheduler, then one worker per tensor-parallel rank (LMCache's ``internal_api_server_port_start``
+ index). Engines of one deployment sit ``port_span`` apart, the widest such range any of its
placements opens, so two TP4 instances (and the recompute engine beside them) never share a port.
"""

from __future__ import annotations

from collections.abc import Sequence

API_PORT_OFFSET = 10000  # {api_port}: an engine's side API (LMCache's internal API server) at port + this
TP_FLAGS = ("--tensor-parallel-size", "-tp", "--tp-size", "--tp")  # vLLM, vLLM short, SGLang, SGLang short


def tensor_parallel(args: Sequence[str]) -> int:
    """The tensor-parallel size an engine's extra arguments ask for; 1 without one.

    A tier's capacity and some metrics are per TP rank (LMCache's max_local_disk_size is).

    >>> tensor_parallel(["--tensor-parallel-size", "4"]), tensor_parallel(["--tp-size=8"])
    (4, 8)
    >>> tensor_parallel([])
    1
    """
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag in TP_FLAGS:
            text = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            return int(text) if text.isdigit() and int(text) > 0 else 1
    return 1


def port_span(*arg_sets: Sequence[str]) -> int:
    """Ports between two engines' slots: LMCache's scheduler and one worker per rank, at the widest TP.

    >>> port_span(["--tensor-parallel-size", "4"], ["-tp", "8"]), port_span()
    (9, 2)
    """
    return 1 + max((tensor_parallel(a) for a in arg_sets), default=1)


def engine_port(base: int, slot: int, span: int) -> int:
    """The serving port of the engine in ``slot`` (its API server's range starts API_PORT_OFFSET above).

    >>> [engine_port(18000, s, 5) for s in (0, 1, 2)]  # instance 0, the recompute engine, instance 1
    [18000, 18005, 18010]
    """
    return base + slot * span
