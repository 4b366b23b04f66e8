"""vLLM's check_logprobs_close per request: a near-tie flip is tolerated, anything else is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nullserver import NullConfig, NullServer

from kvgate.orchestration.g3 import client
from kvgate.probes.loadgen.__main__ import main as loadgen_main
from kvgate.probes.loadgen.outputs import first_divergence, logprobs_close
from kvgate.probes.loadgen.record import RequestRecord, TokenLogprob
from kvgate.probes.loadgen.stream import EventStream

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "loadgen"


def tok(token: str, **top: float) -> TokenLogprob:
    """A token whose top logprobs are ``top`` (keys: ``_`` stands for a space) plus itself at -0.5."""
    alternatives = {k.replace("_", " "): v for k, v in top.items()}
    return TokenLogprob(token, -0.5, {token: -0.5, **alternatives})


SHARED = [tok(" the", _a=-3.0), tok(" cat", _dog=-2.0)]


def test_identical_sequences_are_close() -> None:
    assert first_divergence(SHARED, SHARED) is None
    assert logprobs_close(SHARED, SHARED) is None


def test_a_near_tie_flip_is_close_and_what_follows_is_not_compared() -> None:
    expected = [*SHARED, tok(" sat", _ran=-0.51), tok(" on"), tok(" the")]
    got = [*SHARED, tok(" ran", _sat=-0.49), tok(" away")]  # diverges, and is shorter
    split = first_divergence(expected, got)
    assert split is not None
    assert (split.position, split.expected.token, split.got.token, split.close) == (2, " sat", " ran", True)
    assert logprobs_close(expected, got) is None


def test_a_token_outside_the_other_sides_top_k_is_a_mismatch_with_both_logprobs() -> None:
    expected = [*SHARED, tok(" sat", _ran=-0.51)]
    got = [*SHARED, tok(" flew", _sat=-0.9)]
    assert logprobs_close(expected, got) == (
        "not a near-tie: token 2: recompute ' sat' (-0.5000) vs cached ' flew' (-0.5000); "
        "' flew' in recompute's top 2: no; ' sat' in cached's top 2: yes (-0.9000)"
    )


def test_membership_must_hold_both_ways() -> None:
    expected = [tok(" sat", _ran=-0.51)]
    assert logprobs_close(expected, [tok(" ran", _on=-2.0)]) is not None
    assert logprobs_close([tok(" sat")], [tok(" ran", _sat=-0.6)]) is not None


def test_equal_shared_tokens_but_different_lengths_is_a_mismatch() -> None:
    reason = logprobs_close([*SHARED, tok(" sat")], SHARED)
    assert reason == "cached generated 2 tokens, recompute 3, identical over the first 2"


@pytest.mark.parametrize(("expected", "got"), [([], SHARED), (SHARED, []), ([], [])])
def test_missing_logprobs_are_never_close(expected: list[TokenLogprob], got: list[TokenLogprob]) -> None:
    reason = logprobs_close(expected, got)
    assert reason is not None
    assert reason.startswith("logprobs were not recorded")


def test_a_divergence_without_top_logprobs_is_not_close() -> None:
    bare = [*SHARED, TokenLogprob(" ran", None, {})]
    reason = logprobs_close([*SHARED, tok(" sat", _ran=-0.6)], bare)
    assert reason is not None
    assert reason.startswith("logprobs were not recorded at the first differing token: token 2:")
    assert "(logprob ?)" in reason


def recorded(name: str) -> list[TokenLogprob]:
    record = RequestRecord(0, "u")
    events = EventStream(record)
    events.feed((RECORDED / name).read_bytes())
    events.close()
    return record.logprobs


def test_on_recorded_streams_the_tie_may_flip_but_another_model_may_not() -> None:
    vllm = recorded("vllm_0.32_cpu_completions_stream_logprobs3.sse")
    first = vllm[0]  # "inner" and " Different" tie exactly at -6.1804
    flipped = [TokenLogprob(" Different", first.top[" Different"], first.top), *vllm[2:]]
    assert logprobs_close(vllm, flipped) is None
    llama = recorded("llama_cpp_python_0.3.36_completions_stream_logprobs3.sse")
    reason = logprobs_close(vllm, llama, expected_name="vllm", got_name="llama.cpp")
    assert reason is not None
    assert reason.startswith("not a near-tie: token 0: vllm 'inner' (-6.1804) vs llama.cpp ' Me' (-5.8124)")


def run_loadgen(url: str, out: Path, *extra: str) -> dict[str, object]:
    argv = [
        "--url",
        url,
        "--requests",
        "1",
        "--prompt-tokens",
        "8",
        "--max-tokens",
        "4",
        "--salt",
        "s",
        "--out",
        str(out),
        *extra,
    ]
    assert loadgen_main(argv) == 0
    document: dict[str, object] = json.loads(out.read_text())
    return document


def test_the_load_generator_records_logprobs_into_the_outcome_end_to_end(tmp_path: Path) -> None:
    request = client.Request("u", "m", "s", 8, 1.0, 4, 60.0, logprobs=3)
    assert request.argv("o")[-2:] == ["--logprobs", "3"]
    assert "--logprobs" not in client.Request("u", "m", "s", 8, 1.0, 4, 60.0).argv("o")
    server = NullServer(NullConfig())
    with server.in_thread() as url:
        plain = client.outcome(run_loadgen(url, tmp_path / "plain.json"))
        assert "logprobs" not in server.last_request
        asked = client.outcome(run_loadgen(url, tmp_path / "asked.json", "--logprobs", "3"))
        assert server.last_request["logprobs"] == 3
    assert plain.logprobs == ()
    assert [t.token for t in asked.logprobs] == [" tok"] * 4
    assert asked.logprobs[0].top == {" tok": -0.1, " alt1": -2.0, " alt2": -3.0}
    assert logprobs_close(asked.logprobs, asked.logprobs) is None
    assert (logprobs_close(plain.logprobs, asked.logprobs) or "").startswith("logprobs were not recorded")
