"""G3 cold read (R1): the readers' loads, their restore bandwidth, and their outputs against populate."""

from __future__ import annotations

from typing import Any

from kvgate.configuration.gate_profiles import ClientBounds
from kvgate.orchestration.g3.cold_read import measured_arms, populate_arm, read_mismatches
from kvgate.orchestration.g3.load_arms import LoadTrial, load_trial, summaries
from kvgate.probes.evidence import Counts
from kvgate.probes.loadgen import Comparison

NO_BOUNDS = ClientBounds()  # a client's health recorded, never judged


class Counters:  # what a real Window read around the load
    def __init__(self, hits: int | None, dev: int | None, eng: int | None) -> None:
        self.hit_tokens, self.device_read_bytes, self.server_ttft_mean_s = hits, dev, None
        self.counts = Counts(dev, 0, eng, "vda", load_avg_1m=3.1, cpu_steal_share=0.02)


def doc(first_token_s: list[float], texts: list[str]) -> dict[str, Any]:
    """A load document as the load generator writes it: records with ns times from the load's start."""
    n = len(texts)
    summary = {
        "completed": n,
        "failed": 0,
        "total_input_tokens": 1024 * n,
        "p50_ttft_ms": 100.0,
        "output_throughput_tok_per_s": 50.0,
    }
    records = [
        {"index": i, "success": True, "text": t, "send_ns": 0, "chunk_ns": [int(f * 1e9), int(f * 1e9) + 5]}
        for i, (f, t) in enumerate(zip(first_token_s, texts, strict=True))
    ]
    return {"summary": summary, "records": records, "workload_invalid_reason": None}


def load(arm: str, t: int, d: dict[str, Any], dev: int | None = None, eng: int | None = None) -> LoadTrial:
    return load_trial(
        arm, 4, t, f"s{t}", doc=d, bracket=Counters(4096, dev, eng), min_hit=0.9, client=ClientBounds()
    )


def test_restore_bandwidth_is_the_engines_bytes_over_the_span_to_the_last_first_token() -> None:
    # 4 prompts restored; the last first token comes at 2.0 s; the engine read 1 GB, the device 5 GB
    # (another reader shared it): the restore's bandwidth is the engine's own bytes, never the device's
    first = doc([0.5, 1.0, 1.5, 2.0], ["a"] * 4)
    serial = [load("serial-read", t, first, dev=5 * 10**9, eng=10**9) for t in range(3)]
    parallel = [
        load("parallel-read", t, doc([0.2, 0.2, 0.25, 0.25], ["a"] * 4), dev=10**9, eng=10**9)
        for t in range(3)
    ]
    assert serial[0].first_tokens_done_s == 2.0
    assert serial[0].read_bw_gb_per_s == 0.5
    assert serial[0].host_load == "load 3.1 (1 min), CPU steal 2%"  # recorded in the window
    s = summaries(measured_arms({"serial-read": serial, "parallel-read": parallel, populate_arm("x"): []}))
    assert sorted(s) == ["parallel-read@c4", "serial-read@c4"]
    assert s["serial-read@c4"].read_bw_gb_per_s == 0.5
    assert s["serial-read@c4"].device_read_bytes_p50 == 5e9  # both figures stay in the record
    assert s["serial-read@c4"].engine_read_bytes_p50 == 1e9
    assert s["parallel-read@c4"].read_bw_gb_per_s == 4.0
    assert load("serial-read", 0, doc([1.0], ["a"]), dev=10**9).read_bw_gb_per_s is None  # no engine count


def test_each_reader_is_compared_with_the_outputs_its_populate_computed() -> None:
    populated = doc([1.0, 1.0], ["x y", "p q"])
    trials = {
        populate_arm("serial-read"): [load(populate_arm("serial-read"), 0, populated)],
        populate_arm("parallel-read"): [load(populate_arm("parallel-read"), 0, populated)],
        "serial-read": [load("serial-read", 0, doc([0.1, 0.2], ["x y", "p q"]))],
        "parallel-read": [load("parallel-read", 0, doc([0.1, 0.1], ["x y", "p WRONG"]))],
    }
    found = read_mismatches(trials)
    assert found.near_ties == ()
    assert found.compared == 4  # each reader's two outputs
    (only,) = found.mismatches
    assert only.startswith("parallel-read@c4 trial 0 prompt 1: expected 'p q', got 'p WRONG'")
    assert "parallel-read populate: 0 tokens" in only  # without logprobs no near-tie can excuse it
    assert read_mismatches({}) == Comparison()
