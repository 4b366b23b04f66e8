"""Serving metrics as vllm bench serve defines them, on hand-built request records."""

from __future__ import annotations

import json
import math
import random

import pytest

from kvgate.probes.loadgen import LoadConfig, RequestRecord, invalid_reason, percentile, summarize
from kvgate.probes.loadgen.metrics import NoSamples, distribution, median, metric, peak_concurrency
from kvgate.probes.loadgen.record import MissingUsage
from kvgate.probes.loadgen.run import LoadResult, arrival_offsets_s

MS = 1_000_000  # ns


def rec(
    index: int, chunks_ms: list[float], *, send_ms: float = 0.0, tokens: int | None = None, **kw: object
) -> RequestRecord:
    """A successful record whose token chunks arrived at ``chunks_ms``."""
    fields: dict[str, object] = {
        "success": True,
        "status": 200,
        "prompt_tokens": 100,
        "completion_tokens": len(chunks_ms) if tokens is None else tokens,
    }
    fields.update(kw)
    return RequestRecord(
        index,
        "http://e:1",
        send_ns=int(send_ms * MS),
        chunk_ns=[int(c * MS) for c in chunks_ms],
        **fields,  # type: ignore[arg-type]
    )


def failed(index: int, error: str = "HTTP 500: boom") -> RequestRecord:
    return RequestRecord(index, "http://e:1", chunk_ns=[int(9e12)], status=500, error=error)


def test_percentile_is_numpys_linear_percentile_exactly() -> None:
    np = pytest.importorskip("numpy")
    rng = random.Random(7)
    for _ in range(300):
        xs = [rng.uniform(0, 500) for _ in range(rng.randint(1, 40))]
        for p in (0, 1, 25, 50, 90, 99, 99.9, 100):
            assert percentile(xs, p) == float(np.percentile(xs, p))
        assert median(xs) == float(np.median(xs))
        d = distribution(xs, [])
        assert d["mean"] == pytest.approx(float(np.mean(xs)), rel=1e-12)
        assert d["std"] == pytest.approx(float(np.std(xs)), rel=1e-9)  # population std, as np.std


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([10.0, 20.0, 30.0, 40.0], 50) == 25.0
    assert percentile([10.0, 20.0, 30.0, 40.0], 90) == pytest.approx(37.0)
    assert percentile([5.0], 99) == 5.0


def test_tpot_is_latency_after_first_token_over_remaining_tokens() -> None:
    r = rec(0, [100, 110, 125, 130], send_ms=0)
    s = summarize([r], duration_s=1.0)
    assert s["mean_ttft_ms"] == 100.0
    assert s["mean_e2el_ms"] == 130.0
    assert s["mean_tpot_ms"] == pytest.approx((130 - 100) / (4 - 1))


def test_tpot_uses_usage_tokens_not_chunk_count() -> None:
    bundled = rec(0, [100, 130], tokens=7)  # 7 tokens arrived in 2 chunks
    assert summarize([bundled], duration_s=1.0)["mean_tpot_ms"] == pytest.approx(30 / 6)


def test_single_token_outputs_have_no_tpot_and_extraction_raises() -> None:
    s = summarize([rec(0, [50]), rec(1, [60])], duration_s=1.0)
    assert s["samples_tpot"] == 0
    assert s["p50_tpot_ms"] is None
    with pytest.raises(NoSamples, match="p50_tpot_ms"):
        metric(s, "p50_tpot_ms")
    assert metric(s, "p50_ttft_ms") == 55.0


def test_itl_is_every_gap_of_every_request_flattened() -> None:
    a = rec(0, [100, 110, 125, 130])  # gaps 10, 15, 5
    b = rec(1, [200, 220])  # gap 20
    s = summarize([a, b], duration_s=1.0)
    assert s["samples_itl"] == 4
    assert s["mean_itl_ms"] == pytest.approx(12.5)
    assert s["p50_itl_ms"] == pytest.approx(percentile([10, 15, 5, 20], 50))  # over chunks, not requests
    assert s["mean_tpot_ms"] == pytest.approx((10 + 20) / 2)  # per request: 30/3 and 20/1


def test_failed_requests_are_counted_not_measured() -> None:
    s = summarize([rec(0, [100, 110]), failed(1), failed(2, "timeout: x")], duration_s=2.0)
    assert (s["completed"], s["failed"]) == (1, 2)
    assert s["error_counts"] == {"HTTP 500: boom": 1, "timeout: x": 1}
    assert s["p99_ttft_ms"] == 100.0  # the failed requests' late chunks are not samples
    assert s["request_throughput_per_s"] == 0.5  # completed / duration, as vLLM


def test_throughputs_use_usage_tokens_over_the_run_duration() -> None:
    records = [rec(i, [10, 20, 30], tokens=32, prompt_tokens=2000) for i in range(4)]
    s = summarize(records, duration_s=2.0)
    assert s["total_input_tokens"] == 8000
    assert s["total_output_tokens"] == 128
    assert s["output_throughput_tok_per_s"] == 64.0
    assert s["total_token_throughput_tok_per_s"] == (8000 + 128) / 2.0
    assert s["request_throughput_per_s"] == 2.0


def test_all_failed_gives_counts_and_no_latency_numbers() -> None:
    s = summarize([failed(0), failed(1)], duration_s=1.0)
    assert (s["completed"], s["failed"]) == (0, 2)
    assert s["mean_ttft_ms"] is None
    assert s["p99_e2el_ms"] is None
    with pytest.raises(NoSamples):
        metric(s, "mean_ttft_ms")
    with pytest.raises(NoSamples):
        distribution([], [50])
    with pytest.raises(NoSamples):
        percentile([], 50)


def test_missing_usage_is_an_error_unless_chunks_are_asked_for() -> None:
    r = rec(0, [10, 20, 30], completion_tokens=None)
    with pytest.raises(MissingUsage, match="include_usage"):
        summarize([r], duration_s=1.0)
    assert summarize([r], duration_s=1.0, output_tokens_from="chunks")["total_output_tokens"] == 3
    assert (
        summarize([rec(1, [5], prompt_tokens=None)], duration_s=1.0)["total_token_throughput_tok_per_s"]
        is None
    )


def test_custom_percentiles_get_vllm_keys() -> None:
    s = summarize([rec(0, [1, 2, 3])], duration_s=1.0, percentiles=[50, 99.9])
    assert "p99.9_ttft_ms" in s
    assert "p50_itl_ms" in s
    assert "p99_ttft_ms" not in s
    with pytest.raises(KeyError):
        metric(s, "p99_ttft_ms")


def test_peak_concurrency_uses_half_open_intervals() -> None:
    assert peak_concurrency([rec(0, [10], send_ms=0), rec(1, [20], send_ms=10)]) == 1
    assert peak_concurrency([rec(0, [10], send_ms=0), rec(1, [20], send_ms=5), rec(2, [7], send_ms=6)]) == 3


def test_client_queue_time_is_send_minus_arrival() -> None:
    r = rec(0, [30], send_ms=20, arrival_ns=5 * MS)
    assert summarize([r], duration_s=1.0)["mean_client_queue_time_ms"] == 15.0


def test_records_round_trip_through_json() -> None:
    r = rec(3, [1.5, 2.5], finish_reason="length", text=" a b")
    back = RequestRecord.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r
    assert back.itl_ms == [1.0]


def test_shape_holds_when_usage_matches_the_target() -> None:
    records = [rec(i, [1, 2], tokens=32, prompt_tokens=1990) for i in range(8)]
    assert invalid_reason([*records, failed(9)], prompt_tokens=2000, max_tokens=32) is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"prompt_tokens": 1700}, "prompt tokens off target on 1/4 requests: 1700..2000 vs 2000 ±5%"),
        (
            {"completion_tokens": 9},
            "completions ended early: 1/4 requests produced fewer than max_tokens=32 (min 9)",
        ),
        ({"completion_tokens": 40}, "1/4 completions exceeded max_tokens=32 (max 40)"),
        ({"completion_tokens": None}, "usage missing on 1/4 successful requests"),
    ],
)
def test_shape_is_invalid_with_a_reason(change: dict[str, object], expected: str) -> None:
    records = [rec(i, [1, 2], tokens=32, prompt_tokens=2000) for i in range(3)]
    records.append(rec(3, [1, 2], **{"tokens": 32, "prompt_tokens": 2000, **change}))  # type: ignore[arg-type]
    reason = invalid_reason(records, prompt_tokens=2000, max_tokens=32)
    assert reason is not None
    assert reason.startswith(expected)


def test_shape_cannot_hold_without_successes() -> None:
    assert invalid_reason([failed(0)], prompt_tokens=10, max_tokens=2) == (
        "no successful request among 1: the workload shape cannot be checked"
    )


def test_arrivals_all_at_once_or_poisson_rescaled_to_n_over_rate() -> None:
    assert arrival_offsets_s(3, request_rate=math.inf) == [0.0, 0.0, 0.0]
    poisson = arrival_offsets_s(50, request_rate=10.0, seed=1)
    assert poisson == sorted(poisson)
    assert poisson[0] > 0
    assert poisson[-1] == pytest.approx(50 / 10.0)  # vLLM rescales the total to n / rate
    assert poisson == arrival_offsets_s(50, request_rate=10.0, seed=1)
    assert poisson != arrival_offsets_s(50, request_rate=10.0, seed=2)
    even = arrival_offsets_s(4, request_rate=2.0, burstiness=math.inf)
    assert even == pytest.approx([0.5, 1.0, 1.5, 2.0])


def test_result_document_keeps_records_when_usage_is_missing() -> None:
    config = LoadConfig(urls=("http://e:1",), model="m", max_tokens=2)
    result = LoadResult(config, [rec(0, [1, 2], completion_tokens=None), failed(1)], 1.0, 0.0)
    doc = json.loads(json.dumps(result.to_dict(), allow_nan=False))  # strict JSON: "inf", not Infinity
    assert doc["summary"] is None
    assert "include_usage" in doc["summary_error"]
    assert len(doc["records"]) == 2
    assert doc["config"]["request_rate"] == "inf"
    assert result.to_dict(output_tokens_from="chunks")["summary"]["total_output_tokens"] == 2
