"""Whether every LMCache engine of a deployment can stage the restores G3 drives at once.

The pool and its failure mode are :mod:`kvgate.probes.engines.lmcache`'s. Here: which engines a
deployment starts, at what concurrency and prompt length, and on how many TP ranks —
the tier engine at its highest load level, the capacity arms' ssd-tier engine at its
highest level (and per instance on the whole machine), R1's readers on their own
placement and model. The tier probe carries the answer, so G3 stops before its first
arm, and ``kvgate preflight`` says so in minutes.
"""

from __future__ import annotations

from kvgate.configuration.engine_profile import EngineProfile, tensor_parallel
from kvgate.configuration.gate_profiles import G3Profile
from kvgate.orchestration.g3.context import Setup
from kvgate.probes.engines import staging_shortfall

Demand = tuple[EngineProfile, int, int, int, int]  # profile, concurrency, prompt tokens, TP, state B/token


def demands(setup: Setup, profile: G3Profile) -> list[Demand]:
    """Each engine the deployment starts with the most restores it is asked to hold at once."""
    bpt, tp = setup.state_bytes_per_token, tensor_parallel(setup.engine_args)
    load = profile.load_prompt_tokens or profile.prompt_tokens
    out: list[Demand] = [
        (setup.tier, 1, profile.prompt_tokens, tp, bpt),
        (setup.tier, max(profile.concurrency, default=1), load, tp, bpt),
    ]
    cap, ssd = profile.capacity, setup.capacity.get("ssd-tier")
    if setup.capacity_figure and cap is not None and ssd is not None:
        tokens = cap.prompt_tokens or profile.prompt_tokens
        out.append((ssd, max(cap.concurrency), tokens, tensor_parallel(setup.capacity_args), bpt))
        if profile.whole_machine is not None:
            out.append((ssd, profile.whole_machine.per_instance_concurrency, tokens, tp, bpt))
    if profile.cold_read is not None:
        tokens = profile.cold_read.prompt_tokens or profile.prompt_tokens
        reader_bpt = setup.read.state_bytes_per_token or bpt
        read_tp = tensor_parallel(setup.read.args)  # R1's own placement (one card)
        out += [
            (r, profile.cold_read.concurrency, tokens, read_tp, reader_bpt) for r in setup.readers.values()
        ]
    return out


def staging_reason(setup: Setup, profile: G3Profile) -> str | None:
    """Why an LMCache engine of the deployment cannot stage its restores; None if every one can."""
    found = [
        staging_shortfall(p, state_bytes_per_token=b, prompt_tokens=t, concurrency=c, tensor_parallel=tp)
        for p, c, t, tp, b in demands(setup, profile)
    ]
    return "; ".join(dict.fromkeys(r for r in found if r)) or None
