"""The tiering planner's model: from storage figures and a workload, what G3 should measure.

Pure arithmetic, every input a number with its unit; nothing here reads a file.
Per request at concurrency C, all C requests arriving together (as G3's loads do):

- **restore bytes** ``Bq = reuse × P × kv_bytes_per_token`` (P prompt tokens);
- **restore read** ``t_read = Bq / min(ceiling / C, b_req)``: the C restores share the
  device's read ceiling, and none reads faster than one request did in G2
  (``b_req``, G2's KV-restore bytes per request over its p50 latency); without
  ``b_req`` each may reach its share of the ceiling;
- **recompute TTFT** p50 ``(C + 1) / 2 × P / prefill``: prefills are compute-bound and
  served in arrival order (vLLM's scheduler takes waiting requests first come first
  served), so the median request waits for about half the others;
- **restore TTFT** p50 ``t_read + (C + 1) / 2 × (1 − reuse) × P / prefill``: the read,
  then the part of the prompt the tier does not hold is computed;
- **capacity gain**: output throughput of the SSD tier over DRAM only on a workload
  whose reused prefixes DRAM holds a share ``dram_hit`` of (0: the document set is
  sized past DRAM, as the seed's capacity arm): a miss recomputes in DRAM only and
  restores from the SSD with the tier; each request then decodes for ``decode_s``;
- **storage floor** ``C × Bq / ceiling``: no restore of C such requests can finish
  sooner on this storage; G3 holds measured restores to it;
- **tier capacity** ``documents × P × kv_bytes_per_token``: the working set the SSD
  tier must hold (no replicas, no file-system overhead).

Qwen2.5-32B (256 KiB/token), 10k-token prompts, 16 at once, on a 10 GB/s array whose
KV restore moved 0.6 GB/s per request in G2, with a 2,500 token/s prefill:

>>> s = Storage(ceiling_bytes_per_s=10e9, per_request_bytes_per_s=0.6e9)
>>> w = Workload(kv_bytes_per_token=262144, prompt_tokens=10240, concurrency=16, documents=64)
>>> p = predict(s, w, prefill_tok_per_s=2500.0)
>>> round(p.restore_ttft_s, 2), round(p.recompute_ttft_s, 2), round(p.speedup, 1)
(4.47, 34.82, 7.8)
>>> round(p.storage_floor_s, 2), round(p.tier_bytes / 1e9, 1)
(4.29, 171.8)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Storage:
    """What G2 measured on the tier's volume (or what was assumed without a G2 run)."""

    ceiling_bytes_per_s: float  # the device's best read bandwidth (G2's re-measured sweep ceiling)
    per_request_bytes_per_s: float | None = None  # one request's restore bandwidth in G2's KV restore

    def __post_init__(self) -> None:
        if self.ceiling_bytes_per_s <= 0:
            raise ValueError(f"ceiling_bytes_per_s must be > 0, got {self.ceiling_bytes_per_s}")
        if self.per_request_bytes_per_s is not None and self.per_request_bytes_per_s <= 0:
            raise ValueError(f"per_request_bytes_per_s must be > 0, got {self.per_request_bytes_per_s}")

    def share_bytes_per_s(self, concurrency: int) -> float:
        """One request's read bandwidth when ``concurrency`` restores run at once."""
        share = self.ceiling_bytes_per_s / concurrency
        return share if self.per_request_bytes_per_s is None else min(share, self.per_request_bytes_per_s)


@dataclass(frozen=True)
class Workload:
    """The requests G3 (or the site) sends: their shape and how much of them the tier holds."""

    kv_bytes_per_token: int
    prompt_tokens: int
    concurrency: int
    documents: int  # distinct reusable prefixes the tier must hold at once
    reuse: float = 1.0  # share of each prompt restored from the tier (G3's restore arm: all of it)
    dram_hit: float = 0.0  # share of reused prefixes DRAM still holds without the SSD tier
    decode_s: float | None = None  # one request's decode time (output tokens × TPOT), when known

    def __post_init__(self) -> None:
        for name in ("kv_bytes_per_token", "prompt_tokens", "concurrency", "documents"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be ≥ 1, got {getattr(self, name)}")
        for name in ("reuse", "dram_hit"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be within [0, 1], got {getattr(self, name)}")

    @property
    def restore_bytes(self) -> float:
        """KV bytes one request restores from the tier."""
        return self.reuse * self.prompt_tokens * self.kv_bytes_per_token


@dataclass(frozen=True)
class Prediction:
    """What the planner expects of one workload on one storage; None where an input is missing."""

    workload: Workload
    read_s: float  # one request's restore read at this concurrency
    storage_floor_s: float  # the C restores cannot all finish sooner than this
    tier_bytes: float  # the working set the SSD tier must hold
    restore_ttft_s: float | None  # None: the non-reused part needs a prefill rate
    recompute_ttft_s: float | None  # None: no prefill rate
    capacity_gain: float | None  # output throughput, ssd-tier / dram-only − 1

    @property
    def speedup(self) -> float | None:
        """Recompute TTFT over restore TTFT (R2's 8.6–20× is this ratio)."""
        if self.recompute_ttft_s is None or not self.restore_ttft_s:
            return None
        return self.recompute_ttft_s / self.restore_ttft_s

    @property
    def ttft_reduction(self) -> float | None:
        """1 − restore / recompute TTFT."""
        return None if self.speedup is None else 1 - 1 / self.speedup


def queued_prefill_s(tokens: float, concurrency: int, prefill_tok_per_s: float) -> float:
    """The median request's time to prefill ``tokens`` when C requests are served in arrival order."""
    return (concurrency + 1) / 2 * tokens / prefill_tok_per_s


def predict(storage: Storage, w: Workload, *, prefill_tok_per_s: float | None = None) -> Prediction:
    """The prediction for one workload (see the module docstring for every formula)."""
    if prefill_tok_per_s is not None and prefill_tok_per_s <= 0:
        raise ValueError(f"prefill_tok_per_s must be > 0, got {prefill_tok_per_s}")
    read_s = w.restore_bytes / storage.share_bytes_per_s(w.concurrency)
    restore = recompute = gain = None
    if prefill_tok_per_s is not None:
        new_tokens = (1 - w.reuse) * w.prompt_tokens
        restore = read_s + queued_prefill_s(new_tokens, w.concurrency, prefill_tok_per_s)
        recompute = queued_prefill_s(w.prompt_tokens, w.concurrency, prefill_tok_per_s)
        gain = capacity_gain(w, restore_s=restore, recompute_s=recompute, prefill_tok_per_s=prefill_tok_per_s)
    elif w.reuse == 1:
        restore = read_s
    return Prediction(
        workload=w,
        read_s=read_s,
        storage_floor_s=w.concurrency * w.restore_bytes / storage.ceiling_bytes_per_s,
        tier_bytes=float(w.documents * w.prompt_tokens * w.kv_bytes_per_token),
        restore_ttft_s=restore,
        recompute_ttft_s=recompute,
        capacity_gain=gain,
    )


def capacity_gain(w: Workload, *, restore_s: float, recompute_s: float, prefill_tok_per_s: float) -> float:
    """Throughput of ssd-tier over dram-only − 1: a DRAM miss recomputes without the tier, restores with it.

    A DRAM hit costs both arms the same (the new tokens only). Per request the time is
    TTFT + decode; without a decode time the gain is that of TTFT alone (an upper bound).
    """
    hit = queued_prefill_s((1 - w.reuse) * w.prompt_tokens, w.concurrency, prefill_tok_per_s)
    decode = w.decode_s or 0.0
    dram_only = w.dram_hit * hit + (1 - w.dram_hit) * recompute_s + decode
    ssd_tier = w.dram_hit * hit + (1 - w.dram_hit) * restore_s + decode
    return dram_only / ssd_tier - 1 if ssd_tier > 0 else 0.0
