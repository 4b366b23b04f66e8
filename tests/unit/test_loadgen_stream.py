"""The chunk rules behind TTFT and ITL: HTTP chunked framing and SSE events, byte by byte."""

from __future__ import annotations

import pytest

from kvgate.loadgen.record import RequestRecord
from kvgate.loadgen.stream import EventStream, ProtocolError, StreamError, body_decoder


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


def stream(*events: bytes, t_ns: int = 0) -> RequestRecord:
    record = RequestRecord(0, "u")
    es = EventStream(record)
    for i, event in enumerate(events):
        es.feed(event, t_ns + i)
    es.close(t_ns + len(events))
    return record


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
