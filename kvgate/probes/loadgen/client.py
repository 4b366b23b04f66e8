"""A small stdlib HTTP/1.1 client for streaming ``/v1/completions`` over keep-alive connections.

Raw asyncio streams instead of aiohttp/httpx: the load generator runs on the
engine host, which may have nothing but ``python3`` (3.8+). One connection per
in-flight request slot, reused while the server keeps it alive. Each network
read is decoded at once (as aiohttp's ``iter_any`` hands vLLM one read at a time)
and each token chunk in it stamped with ``time.perf_counter_ns`` once its JSON is
decoded, as vLLM stamps each message (:class:`~kvgate.probes.loadgen.stream.EventStream`).

Chunk and timing rules follow ``vllm bench serve`` (vllm-project/vllm
``vllm/benchmarks/lib/endpoint_request_func.py`` @02cfb534df5674737558730b10f23d1b7aef9b7c);
see :mod:`kvgate.probes.loadgen.record`. Two deliberate differences, both stricter: a
stream that carries an ``error`` object or breaks HTTP framing (closed before
the terminating chunk) is a failed request, and a non-200 answer keeps the start
of its body in the error text, not only the reason phrase.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .record import RequestRecord
from .stream import ERROR_TEXT_BYTES, Body, EventStream, ProtocolError, StreamError, body_decoder

if TYPE_CHECKING:  # runtime tuple[...] needs 3.9; the hosts may run 3.8
    import ssl

    Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_READ_SIZE = 65536


class Pool:
    """Keep-alive connections to one endpoint: a request takes an idle one or opens a new one.

    >>> Pool("http://127.0.0.1:8000").url
    'http://127.0.0.1:8000/v1/completions'
    """

    def __init__(self, base_url: str, *, path: str = "/v1/completions", connect_timeout_s: float = 10.0):
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) base URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + path
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._tls = _tls_context() if parts.scheme == "https" else None
        self._connect_timeout_s = connect_timeout_s
        self._idle: list[Connection] = []
        self._head = self._request_head(parts.path + path, parts.netloc)

    def request_bytes(self, body: bytes) -> bytes:
        """The full HTTP request for a JSON ``body``."""
        return self._head + b"Content-Length: %d\r\n\r\n" % len(body) + body

    async def acquire(self) -> tuple[Connection, bool]:
        """An idle connection (reused=True) or a freshly opened one."""
        if self._idle:
            return self._idle.pop(), True
        return await self.open(), False

    async def open(self) -> Connection:
        """Open a new connection within the connect timeout."""
        opening = asyncio.open_connection(self._host, self._port, ssl=self._tls, limit=_READ_SIZE * 4)
        try:
            return await asyncio.wait_for(opening, self._connect_timeout_s)
        except asyncio.TimeoutError:  # noqa: UP041 - before 3.11 this is not the builtin TimeoutError
            where = f"{self._host}:{self._port}"
            raise ConnectionError(
                f"connect to {where} timed out after {self._connect_timeout_s:g} s"
            ) from None

    def release(self, conn: Connection) -> None:
        """Return a connection whose response was read to the end."""
        self._idle.append(conn)

    async def close(self) -> None:
        """Close every idle connection."""
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()
        for _, writer in idle:
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _request_head(self, target: str, netloc: str) -> bytes:
        lines = [
            f"POST {target} HTTP/1.1",
            f"Host: {netloc}",
            "User-Agent: kvgate-loadgen",
            "Content-Type: application/json",
            "Accept: text/event-stream",
        ]
        api_key = os.environ.get("OPENAI_API_KEY")  # as vllm bench serve; never recorded
        if api_key:
            lines.append(f"Authorization: Bearer {api_key}")
        return ("\r\n".join(lines) + "\r\n").encode("latin-1")


def _tls_context() -> ssl.SSLContext:
    import ssl  # only for https: a minimal engine-host Python may lack the ssl module

    return ssl.create_default_context()


async def stream_completion(
    pool: Pool, body: Callable[[], bytes], record: RequestRecord, *, timeout_s: float
) -> None:
    """Send one streaming completion and fill ``record``; network and server faults become its error.

    The send time is taken before ``body()`` encodes the request, as vLLM's client takes
    ``st`` before aiohttp serialises its ``json=`` payload and writes it.
    """
    record.send_ns = time.perf_counter_ns()
    request = pool.request_bytes(body())
    try:
        await asyncio.wait_for(_exchange(pool, request, record), timeout_s)
    except asyncio.TimeoutError:  # noqa: UP041 - before 3.11 this is not the builtin TimeoutError
        record.error = f"timeout: the response did not complete within {timeout_s:g} s"
    except (OSError, ProtocolError, StreamError, ValueError) as exc:
        record.error = f"{type(exc).__name__}: {exc} (after {len(record.chunk_ns)} token chunks)"
    record.done_ns = time.perf_counter_ns()
    if record.status == 200 and not record.error and not record.chunk_ns:
        record.error = "no chunk carried choices: TTFT undefined (vllm marks this request failed too)"
    record.success = record.status == 200 and not record.error


async def _exchange(pool: Pool, request: bytes, record: RequestRecord) -> None:
    conn, reused = await pool.acquire()
    try:
        head = await _send(conn, request, stale_ok=reused)
        if head is None and reused:  # the server had closed this idle keep-alive connection
            conn[1].close()
            conn = await pool.open()
            head = await _send(conn, request, stale_ok=False)
        if head is None:
            raise ProtocolError("connection closed before the response head")
        record.status, headers = head
        keep = await _read_body(conn[0], headers, record)
    except BaseException:  # cancelled by the timeout, or a fault: this connection is done
        conn[1].close()
        raise
    if keep:
        pool.release(conn)
    else:
        conn[1].close()


async def _send(conn: Connection, request: bytes, *, stale_ok: bool) -> tuple[int, dict[str, str]] | None:
    """Write the request and read the response head; None if the connection was already closed."""
    reader, writer = conn
    try:
        writer.write(request)
        await writer.drain()
        return await _read_head(reader)
    except ConnectionError:
        if stale_ok:
            return None
        raise


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]] | None:
    status_line = await reader.readline()
    if not status_line:
        return None
    parts = status_line.decode("latin-1").split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise ProtocolError(f"bad status line {status_line[:80]!r}")
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n"):
            return int(parts[1]), headers
        if not line:
            raise ProtocolError("connection closed inside the response head")
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str], record: RequestRecord) -> bool:
    """Consume the body into ``record``; True when the connection may be reused."""
    body = body_decoder(headers)
    if record.status != 200:
        record.error = await _error_text(reader, body, record.status)
        return body.reusable
    events = EventStream(record)
    while not body.done:
        data = await reader.read(_READ_SIZE)
        if not data:
            body.eof()
            break
        events.feed(body.feed(data))
    events.close()
    return body.reusable and headers.get("connection", "").lower() != "close"


async def _error_text(reader: asyncio.StreamReader, body: Body, status: int) -> str:
    text = b""
    while not body.done:
        data = await reader.read(_READ_SIZE)
        if not data:
            break
        text += body.feed(data)[: ERROR_TEXT_BYTES - len(text)]
    shown = text.decode("utf-8", "replace").strip()
    return f"HTTP {status}: {shown}" if shown else f"HTTP {status}"
