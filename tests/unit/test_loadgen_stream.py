"""The chunk rules behind TTFT and ITL: HTTP chunked framing and SSE events, byte by byte; logprobs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvgate.probes.loadgen.record import RequestRecord, TokenLogprob
from kvgate.probes.loadgen.run import LoadConfig
from kvgate.probes.loadgen.stream import EventStream, ProtocolError, StreamError, body_decoder

RECORDED = Path(__file__).parents[1] / "data" / "recorded" / "loadgen"


def chunked(*payloads: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in payloads) + b"0\r\n\r\n"


def sse(data: str) -> bytes:
    return f"data: {data}\n\n".encode()


TOKEN = '{"choices":[{"index":0,"text":"%s","finish_reason":%s}]}'
USAGE = '{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}'


def test_chunked_body_decodes_across_every_split_point() -> None:
    wire = chunked(b"hello ", b"world", b"!" * 300)
    for cut in range(len(wire) + 1):
        body = body_decoder({"transfer-encoding": "chunked"})
        out = body.feed(wire[:cut]) + body.feed(wire[cut:])
        assert out == b"hello world" + b"!" * 300
        assert body.done
        assert body.reusable


def test_chunked_body_skips_trailers_and_detects_truncation() -> None:
    body = body_decoder({"transfer-encoding": "chunked"})
    assert body.feed(b"3\r\nabc\r\n0\r\nX-Trailer: 1\r\n") == b"abc"
    assert not body.done
    body.feed(b"\r\n")
    assert body.done
    cut = body_decoder({"transfer-encoding": "chunked"})
    cut.feed(b"3\r\nabc\r\n")
    with pytest.raises(ProtocolError, match="before the last chunk"):
        cut.eof()


def test_length_and_close_delimited_bodies() -> None:
    body = body_decoder({"content-length": "5"})
    assert body.feed(b"abcdefg") == b"abcde"
    assert body.done
    until_close = body_decoder({})
    assert until_close.feed(b"xyz") == b"xyz"
    assert not until_close.reusable


def stream(*reads: bytes) -> RequestRecord:
    """Feed each read in turn; the clock reads the index of the read being handled."""
    record, now = RequestRecord(0, "u"), [0]
    es = EventStream(record, clock=lambda: now[0])
    for i, data in enumerate(reads):
        now[0] = i
        es.feed(data)
    now[0] = len(reads)
    es.close()
    return record


def test_events_in_one_read_are_stamped_one_by_one_as_vllm_stamps_each_message() -> None:
    """vLLM's client takes ``time.perf_counter()`` per message after ``json.loads``; main stamped a read once.

    Fails on main: every chunk of one read had the read's time (an inter-token gap of exactly 0).
    """
    record, ticks = RequestRecord(0, "u"), iter(range(100, 200))
    es = EventStream(record, clock=lambda: next(ticks))
    es.feed(sse(TOKEN % ("a", "null")) + sse(TOKEN % ("b", "null")) + sse(USAGE))
    es.close()
    assert record.chunk_ns == [100, 101]  # two clock reads, one per token chunk, after each decode
    assert record.itl_ms == [1e-6]


def test_every_chunk_with_choices_is_a_token_chunk_even_with_empty_text() -> None:
    record = stream(sse(TOKEN % ("", "null")), sse(TOKEN % (" a", "null")), sse(TOKEN % (" b", '"length"')))
    assert record.chunk_ns == [0, 1, 2]  # vLLM: "text could be empty here e.g. for special tokens"
    assert record.text == " a b"
    assert record.finish_reason == "length"


def test_usage_only_and_done_events_are_not_token_chunks() -> None:
    record = stream(sse(TOKEN % ("x", "null")), sse(USAGE), sse("[DONE]"))
    assert record.chunk_ns == [0]  # E2EL ends at the last token chunk, not at usage or [DONE]
    assert (record.prompt_tokens, record.completion_tokens) == (7, 3)


def test_events_split_across_reads_are_stamped_when_complete() -> None:
    wire = sse(TOKEN % ("x", "null"))
    record = stream(wire[:10], wire[10:])
    assert record.chunk_ns == [1]


def test_crlf_events_comments_and_a_final_event_without_blank_line() -> None:
    wire = b": ping\r\n\r\n" + f"data: {TOKEN % ('x', 'null')}\r\n\r\n".encode() + f"data: {USAGE}".encode()
    record = stream(wire)
    assert record.chunk_ns == [0]
    assert record.completion_tokens == 3


def test_error_inside_the_stream_fails_the_request() -> None:
    with pytest.raises(StreamError, match="out of blocks"):
        stream(sse(TOKEN % ("x", "null")), sse('{"error":{"message":"out of blocks"}}'))
    with pytest.raises(ProtocolError):
        stream(sse("[1, 2]"))


def test_vllm_logprobs_stream_gives_one_token_record_per_generated_token() -> None:
    record = stream((RECORDED / "vllm_0.32_cpu_completions_stream_logprobs3.sse").read_bytes())
    assert [t.token for t in record.logprobs] == ["inner"] + [" Different"] * 5
    assert "".join(t.token for t in record.logprobs) == record.text
    assert len(record.chunk_ns) == len(record.logprobs) == record.completion_tokens == 6
    first = record.logprobs[0]
    assert first.logprob == pytest.approx(-6.180370807647705)
    assert first.top == {
        "inner": first.logprob,
        " Different": first.logprob,
        " time": -6.188183307647705,
    }  # a tie
    assert record.logprobs[1].top[""] == pytest.approx(-6.304826736450195)  # a token that decodes to nothing


def test_llama_cpp_logprobs_stream_ends_with_a_chunk_that_lists_no_token() -> None:
    record = stream((RECORDED / "llama_cpp_python_0.3.36_completions_stream_logprobs3.sse").read_bytes())
    assert len(record.chunk_ns) == 7  # the last chunk: text "", logprobs null, finish_reason
    assert [t.token for t in record.logprobs] == [" Me", " east", " Move", " Move", "general", "sj"]
    assert record.finish_reason == "length"
    sj = record.logprobs[-1]
    assert sj.token in sj.top
    assert max(sj.top.values()) > sj.top["sj"]  # raw logprobs, before llama.cpp's repeat penalty


LOGPROBS_2 = (
    '{"choices":[{"index":0,"text":" a b","finish_reason":null,"logprobs":{"text_offset":[0,2],'
    '"tokens":[" a"," b"],"token_logprobs":[-0.5,null],"top_logprobs":[{" a":-0.5,"x":-1},null]}}]}'
)


def test_a_chunk_listing_two_tokens_adds_two_records() -> None:
    record = stream(sse(LOGPROBS_2))
    assert record.chunk_ns == [0]
    assert record.logprobs == [
        TokenLogprob(" a", -0.5, {" a": -0.5, "x": -1.0}),
        TokenLogprob(" b", None, {}),
    ]


@pytest.mark.parametrize(
    ("logprobs", "message"),
    [
        ('{"tokens":[" a"],"token_logprobs":[-1,-2],"top_logprobs":[null]}', "differ in length"),
        ('{"tokens":[" a"],"token_logprobs":["-1"],"top_logprobs":[null]}', "not a number"),
        ('{"tokens":[" a"],"token_logprobs":[-1],"top_logprobs":[[" a"]]}', "not a JSON object"),
        ("[1]", "logprobs is not a JSON object"),
    ],
)
def test_malformed_logprobs_break_the_protocol(logprobs: str, message: str) -> None:
    event = '{"choices":[{"index":0,"text":" a","finish_reason":null,"logprobs":' + logprobs + "}]}"
    with pytest.raises(ProtocolError, match=message):
        stream(sse(event))


def test_logprobs_round_trip_through_json_and_old_records_have_none() -> None:
    record = stream(sse(LOGPROBS_2))
    assert RequestRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    old = record.to_dict()
    del old["logprobs"]  # an artifact written before logprobs were recorded
    assert RequestRecord.from_dict(old).logprobs == []


def test_logprobs_are_asked_only_when_configured() -> None:
    config = LoadConfig(urls=("http://e:1",), model="m", max_tokens=4)
    assert "logprobs" not in json.loads(config.body("p"))
    assert (
        json.loads(LoadConfig(urls=("http://e:1",), model="m", max_tokens=4, logprobs=5).body("p"))[
            "logprobs"
        ]
        == 5
    )
    with pytest.raises(ValueError, match="logprobs"):
        LoadConfig(urls=("http://e:1",), model="m", max_tokens=4, logprobs=-1)
