"""Synchronous decoders for a streamed HTTP/1.1 body and the SSE events inside it.

The client reads whatever bytes have arrived, stamps them once, and feeds them
here; no await per chunk. Framing: ``Transfer-Encoding: chunked``,
``Content-Length``, or until the server closes.

>>> body = _Chunked()
>>> body.feed(b"5\\r\\nhello\\r\\n0\\r\\n\\r\\n"), body.done
(b'hello', True)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from .record import RequestRecord, TokenLogprob

_decode_json = json.JSONDecoder().decode
ERROR_TEXT_BYTES = 2048


class ProtocolError(Exception):
    """The server broke HTTP/1.1 or SSE framing, e.g. closed the connection mid-stream."""


class StreamError(Exception):
    """The server reported an error inside an HTTP 200 event stream."""


class Body:
    """A body delimited by the connection closing (no length, not chunked)."""

    done = False
    reusable = False  # the connection ends with the body

    def feed(self, data: bytes) -> bytes:
        """Payload bytes contained in ``data``."""
        return data

    def eof(self) -> None:
        """The connection closed: fine here, an error where the framing says more was due."""
        self.done = True


class _Length(Body):
    reusable = True

    def __init__(self, length: int) -> None:
        self._remaining = length
        self.done = length == 0

    def feed(self, data: bytes) -> bytes:
        data = data[: self._remaining]
        self._remaining -= len(data)
        self.done = self._remaining == 0
        return data

    def eof(self) -> None:
        raise ProtocolError(f"connection closed with {self._remaining} body bytes still due")


class _Chunked(Body):
    """Incremental ``Transfer-Encoding: chunked`` decoder (trailers are skipped)."""

    reusable = True

    def __init__(self) -> None:
        self._buffer = b""
        self._in_chunk = 0  # data bytes (+2 for CRLF) still due in the current chunk
        self._trailers = False

    def feed(self, data: bytes) -> bytes:
        buffer, pos = self._buffer + data, 0
        out: list[bytes] = []
        while not self.done:
            if self._in_chunk > 0:
                take = buffer[pos : pos + self._in_chunk]
                out.append(take)
                pos += len(take)
                self._in_chunk -= len(take)
                if self._in_chunk:
                    break
                self._in_chunk = -2  # the CRLF after the data
            if self._in_chunk < 0:
                if len(buffer) - pos < 2:
                    break
                pos, self._in_chunk = pos + 2, 0
            end = buffer.find(b"\n", pos)
            if end < 0:
                break
            line, pos = buffer[pos:end].strip(), end + 1
            self._line(line)
        self._buffer = buffer[pos:]
        return b"".join(out)

    def _line(self, line: bytes) -> None:
        if self._trailers:
            self.done = not line
            return
        size = int(line.split(b";", 1)[0], 16)
        self._trailers = size == 0
        self._in_chunk = size

    def eof(self) -> None:
        raise ProtocolError("connection closed before the last chunk")


def body_decoder(headers: dict[str, str]) -> Body:
    """The decoder the response headers call for."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return _Chunked()
    if "content-length" in headers:
        return _Length(int(headers["content-length"]))
    return Body()


class EventStream:
    """Splits SSE bytes into ``data:`` payloads and applies vLLM's chunk rules to the record.

    Each token chunk is stamped (``clock()``) once its JSON is decoded, as vLLM's client
    stamps every message after ``json.loads``: chunks that arrive in one network read
    get their own increasing times, so an inter-token gap is never an exact 0 that the
    field's client would not have reported.
    """

    def __init__(self, record: RequestRecord, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self._record = record
        self._clock = clock
        self._buffer = b""
        self._texts: list[str] = []

    def feed(self, data: bytes) -> None:
        """Handle every complete event in ``data``."""
        buffer = self._buffer + data
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")
        *events, self._buffer = buffer.split(b"\n\n")
        for event in events:
            self._event(event)

    def close(self) -> None:
        """Handle a last event not followed by a blank line, then store the text."""
        if self._buffer.strip():
            self._event(self._buffer)
        self._buffer = b""
        self._record.text = "".join(self._texts)

    def _event(self, event: bytes) -> None:
        for line in event.split(b"\n"):
            if line.startswith(b"data:"):
                payload = line[5:].strip()
                if payload and payload != b"[DONE]":
                    self._data(_decode_json(payload.decode("utf-8")))

    def _data(self, data: Any) -> None:
        if not isinstance(data, dict):
            raise ProtocolError(f"SSE data is not a JSON object: {str(data)[:80]}")
        if data.get("error") or data.get("object") == "error":
            raise StreamError(json.dumps(data.get("error", data))[:ERROR_TEXT_BYTES])
        choices = data.get("choices")
        if choices:
            choice = choices[0]
            self._record.chunk_ns.append(self._clock())
            self._texts.append(choice.get("text") or "")
            self._record.finish_reason = choice.get("finish_reason") or self._record.finish_reason
            self._record.logprobs.extend(token_logprobs(choice.get("logprobs")))
        usage = data.get("usage")
        if usage:
            self._record.prompt_tokens = _int_or_none(usage.get("prompt_tokens"))
            self._record.completion_tokens = _int_or_none(usage.get("completion_tokens"))


def token_logprobs(logprobs: Any) -> list[TokenLogprob]:
    """The tokens one completions ``choices[0].logprobs`` object lists (none when it is null).

    >>> token_logprobs({"tokens": [" a"], "token_logprobs": [-0.5], "top_logprobs": [{" a": -0.5, " b": -1}]})
    [TokenLogprob(token=' a', logprob=-0.5, top={' a': -0.5, ' b': -1.0})]
    """
    if logprobs is None:
        return []
    if not isinstance(logprobs, dict):
        raise ProtocolError(f"logprobs is not a JSON object: {str(logprobs)[:80]}")
    tokens = logprobs.get("tokens") or []
    values = logprobs.get("token_logprobs") or [None] * len(tokens)
    tops = logprobs.get("top_logprobs") or [None] * len(tokens)
    if not len(tokens) == len(values) == len(tops):
        raise ProtocolError(
            f"logprobs lists differ in length: {len(tokens)} tokens, "
            f"{len(values)} token_logprobs, {len(tops)} top_logprobs"
        )
    return [
        TokenLogprob(str(t), None if v is None else _logprob(v), _top(top))
        for t, v, top in zip(tokens, values, tops)  # noqa: B905 - no strict= on 3.8; lengths checked above
    ]


def _top(top: Any) -> dict[str, float]:
    if top is None:
        return {}
    if not isinstance(top, dict):
        raise ProtocolError(f"a top_logprobs entry is not a JSON object: {str(top)[:80]}")
    return {str(token): _logprob(value) for token, value in top.items()}


def _logprob(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ProtocolError(f"a logprob is not a number: {value!r}")


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
