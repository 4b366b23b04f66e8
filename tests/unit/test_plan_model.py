"""The tiering planner's arithmetic (issue 13 item 7): every formula of orchestration.plan.model, by hand.

There was no planner on main: every test here fails there (no kvgate.orchestration.plan).
"""

from __future__ import annotations

import pytest

from kvgate.orchestration.plan.model import Storage, Workload, predict, queued_prefill_s

QWEN = 262144  # Qwen2.5-32B: 2 × 64 layers × 8 KV heads × 128 × 2 bytes per token


def workload(**changes: object) -> Workload:
    base: dict[str, object] = {
        "kv_bytes_per_token": QWEN,
        "prompt_tokens": 10240,
        "concurrency": 16,
        "documents": 64,
    }
    return Workload(**(base | changes))  # type: ignore[arg-type]


def test_restores_share_the_ceiling_and_none_reads_faster_than_one_request_did_in_g2() -> None:
    w = workload()
    bq = 10240 * QWEN  # 2.68 GB per request
    shared = predict(Storage(ceiling_bytes_per_s=8e9), w)  # 16 share 8 GB/s: 0.5 GB/s each
    assert shared.read_s == pytest.approx(bq / 0.5e9)
    capped = predict(Storage(ceiling_bytes_per_s=8e9, per_request_bytes_per_s=0.25e9), w)
    assert capped.read_s == pytest.approx(bq / 0.25e9)  # G2 saw one request read at 0.25 GB/s
    one = predict(Storage(ceiling_bytes_per_s=8e9, per_request_bytes_per_s=0.25e9), workload(concurrency=1))
    assert one.read_s == pytest.approx(bq / 0.25e9)


def test_recompute_serves_prefills_in_arrival_order_so_the_median_waits_for_half() -> None:
    assert queued_prefill_s(1000, 1, 500.0) == pytest.approx(2.0)
    assert queued_prefill_s(1000, 15, 500.0) == pytest.approx(16.0)  # (15 + 1) / 2 × 2 s
    p = predict(
        Storage(ceiling_bytes_per_s=10e9, per_request_bytes_per_s=0.6e9), workload(), prefill_tok_per_s=2500.0
    )
    assert p.recompute_ttft_s == pytest.approx(17 / 2 * 10240 / 2500)
    assert p.speedup == pytest.approx(p.recompute_ttft_s / p.restore_ttft_s)
    assert p.ttft_reduction == pytest.approx(1 - p.restore_ttft_s / p.recompute_ttft_s)


def test_the_part_of_a_prompt_the_tier_does_not_hold_is_computed_after_the_read() -> None:
    s, w = Storage(ceiling_bytes_per_s=16e9), workload(reuse=0.75)
    p = predict(s, w, prefill_tok_per_s=1000.0)
    assert p.read_s == pytest.approx(0.75 * 10240 * QWEN / 1e9)
    assert p.restore_ttft_s == pytest.approx(p.read_s + 17 / 2 * 2560 / 1000)
    assert predict(s, w).restore_ttft_s is None  # without a prefill rate the new tokens' time is unknown
    assert predict(s, workload()).restore_ttft_s == pytest.approx(predict(s, workload()).read_s)


def test_storage_floor_and_the_tier_the_working_set_needs() -> None:
    p = predict(Storage(ceiling_bytes_per_s=5e9), workload(concurrency=4, documents=100))
    assert p.storage_floor_s == pytest.approx(4 * 10240 * QWEN / 5e9)
    assert p.tier_bytes == 100 * 10240 * QWEN
    assert p.recompute_ttft_s is None
    assert p.speedup is None
    assert p.capacity_gain is None


def test_capacity_gain_is_ssd_tier_over_dram_only_when_dram_misses_the_reused_prefixes() -> None:
    s = Storage(ceiling_bytes_per_s=10e9, per_request_bytes_per_s=0.6e9)
    miss_all = predict(s, workload(decode_s=10.0), prefill_tok_per_s=2500.0)
    restore, recompute = miss_all.restore_ttft_s, miss_all.recompute_ttft_s
    assert restore is not None
    assert recompute is not None
    assert miss_all.capacity_gain == pytest.approx((recompute + 10) / (restore + 10) - 1)
    all_hit = predict(s, workload(decode_s=10.0, dram_hit=1.0), prefill_tok_per_s=2500.0)
    assert all_hit.capacity_gain == pytest.approx(0.0)  # DRAM holds it all: the SSD tier adds nothing
    ttft_only = predict(s, workload(), prefill_tok_per_s=2500.0)
    assert ttft_only.capacity_gain == pytest.approx(recompute / restore - 1)  # no decode time: an upper bound


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"reuse": 1.5}, "reuse"), ({"dram_hit": -0.1}, "dram_hit"), ({"concurrency": 0}, "concurrency")],
)
def test_a_workload_outside_its_domain_says_which_field(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        workload(**changes)


def test_storage_and_prefill_must_be_positive() -> None:
    with pytest.raises(ValueError, match="ceiling_bytes_per_s"):
        Storage(ceiling_bytes_per_s=0)
    with pytest.raises(ValueError, match="prefill_tok_per_s"):
        predict(Storage(ceiling_bytes_per_s=1e9), workload(), prefill_tok_per_s=0.0)
