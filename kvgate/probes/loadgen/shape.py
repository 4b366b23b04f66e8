"""Did the workload have the shape it was meant to have? Checked from the responses' own usage.

A serving benchmark whose prompts were silently truncated, or whose completions
stopped at an EOS, measures a different workload than the one reported (vllm
#10847, #13333; sglang PR #15732). :func:`invalid_reason` returns the text that
goes into ``kvgate.base.criteria.Measurement.invalid_reason``, or ``None`` when the shape held.

>>> from kvgate.probes.loadgen.record import RequestRecord
>>> ok = RequestRecord(0, "u", chunk_ns=[1], success=True, prompt_tokens=2000, completion_tokens=32)
>>> invalid_reason([ok], prompt_tokens=2000, max_tokens=32) is None
True
>>> short = RequestRecord(1, "u", chunk_ns=[1], success=True, prompt_tokens=2000, completion_tokens=7)
>>> invalid_reason([ok, short], prompt_tokens=2000, max_tokens=32)
'completions ended early: 1/2 requests produced fewer than max_tokens=32 (min 7)'
"""

from __future__ import annotations

from collections.abc import Sequence

from .record import RequestRecord


def invalid_reason(
    records: Sequence[RequestRecord],
    *,
    prompt_tokens: int,
    max_tokens: int,
    tolerance: float = 0.05,
) -> str | None:
    """Why the run's shape is INVALID (prompt length off target, early stops, no usage), or None."""
    ok = [r for r in records if r.success]
    if not ok:
        return f"no successful request among {len(records)}: the workload shape cannot be checked"
    reasons = [
        _missing_usage(ok),
        _prompt_off_target(ok, prompt_tokens, tolerance),
        *_completions_off_length(ok, max_tokens),
    ]
    found = [r for r in reasons if r]
    return "; ".join(found) if found else None


def _missing_usage(ok: Sequence[RequestRecord]) -> str | None:
    missing = [r for r in ok if r.prompt_tokens is None or r.completion_tokens is None]
    if not missing:
        return None
    return (
        f"usage missing on {len(missing)}/{len(ok)} successful requests "
        "(server ignored stream_options.include_usage): token counts unverifiable"
    )


def _prompt_off_target(ok: Sequence[RequestRecord], target: int, tolerance: float) -> str | None:
    counts = [r.prompt_tokens for r in ok if r.prompt_tokens is not None]
    off = [n for n in counts if abs(n - target) > tolerance * target]
    if not off:
        return None
    return (
        f"prompt tokens off target on {len(off)}/{len(ok)} requests: "
        f"{min(counts)}..{max(counts)} vs {target} ±{tolerance:.0%}"
    )


def _completions_off_length(ok: Sequence[RequestRecord], max_tokens: int) -> list[str]:
    """Every completion is asked for exactly ``max_tokens``: fewer stopped early (an EOS), more overran."""
    counts = [r.completion_tokens for r in ok if r.completion_tokens is not None]
    short = [n for n in counts if n < max_tokens]
    long = [n for n in counts if n > max_tokens]
    reasons = []
    if short:
        reasons.append(
            f"completions ended early: {len(short)}/{len(ok)} requests produced fewer than "
            f"max_tokens={max_tokens} (min {min(short)})"
        )
    if long:
        reasons.append(
            f"{len(long)}/{len(ok)} completions exceeded max_tokens={max_tokens} (max {max(long)})"
        )
    return reasons
