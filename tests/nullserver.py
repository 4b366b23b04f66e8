"""A null OpenAI-compatible streaming server (stdlib asyncio) for kvgate's tests and benchmarks.

``POST .../completions`` answers like vLLM: HTTP/1.1 chunked ``text/event-stream``
with one ``data:`` event per token, a usage-only event when
``stream_options.include_usage`` is set, then ``data: [DONE]``. It "generates"
``max_tokens`` tokens (fewer with ``stop_after_tokens``, like an EOS) after
``first_token_delay_s`` and ``token_delay_s`` between tokens, and counts one
prompt token per whitespace-separated word. With ``logprobs: K`` each token
chunk carries a completions ``logprobs`` object: the token " tok" first of K
(" alt1"… after it), as vLLM sends greedy output. Faults on demand: an
HTTP error status, or dropping the connection mid-stream.

``POST /tokenize`` counts a prompt as its usage does ({"tokens": [...]}, one per word).

It also measures itself as vLLM does: ``GET /metrics`` exposes vLLM's TTFT (from
the request's arrival to its first token chunk written), inter-token, per-request
time-per-output-token and end-to-end histograms in Prometheus text, so a client's
numbers can be set beside what the server did over the same requests.

Run it alone: ``python tests/nullserver.py --port 0`` prints its URL (``SERVE`` is that command).

>>> NullConfig(first_token_delay_s=0.1).fail_status is None
True
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

SERVE = [sys.executable, __file__]  # the command that runs it in its own process

_OK_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
)
_TOKEN = (
    '{"id":"cmpl-null","object":"text_completion","model":%s,'
    '"choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":%s}],"usage":null}'
)
_USAGE = (
    '{"id":"cmpl-null","object":"text_completion","model":%s,"choices":[],'
    '"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}'
)


@dataclass(frozen=True)
class NullConfig:
    """Timing and fault behaviour of the null server."""

    first_token_delay_s: float = 0.0
    token_delay_s: float = 0.0
    fail_status: int | None = None  # answer every completion with this HTTP status
    close_after_chunks: int | None = None  # drop the connection after this many token chunks
    stop_after_tokens: int | None = None  # finish early with finish_reason "stop"
    keep_alive: bool = True  # False: close after each response without saying so (an idle timeout)


# vLLM 0.32 v1/metrics/loggers.py bucket bounds (seconds), the finer ones a null server needs
_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 10.0)


class Timings:
    """The server's own latency histograms, named as vLLM's (``vllm:…_seconds``)."""

    NAMES = (
        "vllm:time_to_first_token_seconds",
        "vllm:inter_token_latency_seconds",
        "vllm:request_time_per_output_token_seconds",
        "vllm:e2e_request_latency_seconds",
    )

    def __init__(self) -> None:
        self._obs: dict[str, list[float]] = {name: [] for name in self.NAMES}

    def request(self, arrival_s: float, chunks_s: list[float]) -> None:
        """One finished request: its arrival and the time each token chunk was written."""
        if not chunks_s:
            return
        ttft, itl, tpot, e2e = self.NAMES
        self._obs[ttft].append(chunks_s[0] - arrival_s)
        self._obs[itl] += [b - a for a, b in zip(chunks_s, chunks_s[1:])]  # noqa: B905, RUF007 - 3.8
        if len(chunks_s) > 1:
            self._obs[tpot].append((chunks_s[-1] - chunks_s[0]) / (len(chunks_s) - 1))
        self._obs[e2e].append(chunks_s[-1] - arrival_s)

    def prometheus(self) -> bytes:
        """Every histogram as Prometheus text exposition (cumulative buckets, sum, count)."""
        lines = []
        for name, values in self._obs.items():
            lines.append(f"# TYPE {name} histogram")
            for le in _BUCKETS:
                lines.append(f'{name}_bucket{{le="{le}"}} {sum(v <= le for v in values)}')
            lines += [f'{name}_bucket{{le="+Inf"}} {len(values)}', f"{name}_sum {sum(values)}"]
            lines.append(f"{name}_count {len(values)}")
        return ("\n".join(lines) + "\n").encode()


class NullServer:
    """Serve :class:`NullConfig` on ``host:port`` (port 0 picks a free one)."""

    def __init__(self, config: NullConfig, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config = config
        self.timings = Timings()
        self.requests_seen = 0
        self.connections_seen = 0
        self.last_request: dict[str, object] = {}  # the last completion body, prompt left out
        self._host, self._port = host, port
        self._server: asyncio.AbstractServer | None = None
        self._closing: asyncio.Event | None = None
        self._handlers: dict[asyncio.Future[None], asyncio.StreamWriter] = {}

    async def start(self) -> str:
        """Start listening; returns the base URL."""
        self._closing = asyncio.Event()  # made here: on 3.8 an Event binds to the current loop
        self._server = await asyncio.start_server(self._handle, self._host, self._port)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://{self._host}:{port}"

    async def stop(self) -> None:
        """Stop listening, end every open connection (mid-stream too), wait until all is closed."""
        if self._server is None or self._closing is None:
            return
        self._closing.set()
        self._server.close()
        for writer in self._handlers.values():
            writer.close()
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=10)
        await self._server.wait_closed()
        await asyncio.sleep(0)  # let the closed transports release their sockets

    @contextlib.contextmanager
    def in_thread(self) -> Iterator[str]:
        """Run on a background event loop for the duration of the ``with``; yields the base URL."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="nullserver", daemon=True)
        thread.start()
        url = asyncio.run_coroutine_threadsafe(self.start(), loop).result(timeout=10)
        try:
            yield url
        finally:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections_seen += 1
        task = asyncio.current_task()
        if task is not None:  # always, inside a connection handler
            self._handlers[task] = writer
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, _Dropped):
            pass
        finally:
            writer.close()
            if task is not None:
                self._handlers.pop(task, None)

    async def _one_request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; False when the connection is to end."""
        request = await _read_request(reader)
        if request is None:
            return False
        method, target, body = request
        if method == "POST" and target.endswith("/completions"):
            completion = json.loads(body)
            self.requests_seen += 1
            self.last_request = {k: v for k, v in completion.items() if k != "prompt"}
            await self._complete(completion, writer)
        elif target.endswith("/models"):
            _respond(writer, 200, b'{"object":"list","data":[{"id":"null-model","object":"model"}]}')
        elif target == "/metrics":
            _respond(writer, 200, self.timings.prometheus(), content_type="text/plain")
        elif method == "POST" and target == "/tokenize":  # a word per token, as its usage counts them
            words = str(json.loads(body).get("prompt", "")).split()
            _respond(writer, 200, json.dumps({"tokens": list(range(len(words)))}).encode())
        else:
            _respond(writer, 404 if target != "/health" else 200, b"{}")
        await writer.drain()
        return self.config.keep_alive

    async def _complete(self, request: dict[str, object], writer: asyncio.StreamWriter) -> None:
        cfg = self.config
        if cfg.fail_status is not None:
            _respond(writer, cfg.fail_status, b'{"error":{"message":"null server: injected failure"}}')
            return
        max_tokens = int(str(request.get("max_tokens", 16)))
        n = min(max_tokens, cfg.stop_after_tokens) if cfg.stop_after_tokens is not None else max_tokens
        model = json.dumps(request.get("model", "null-model"))
        top_k = request.get("logprobs")
        arrival_s = time.perf_counter()
        written: list[float] = []
        writer.write(_OK_HEAD)
        await self._pause(cfg.first_token_delay_s)
        for i in range(n):
            if i and cfg.token_delay_s:
                await self._pause(cfg.token_delay_s)
            if cfg.close_after_chunks is not None and i == cfg.close_after_chunks:
                raise _Dropped
            reason = "null" if i < n - 1 else ('"length"' if n == max_tokens else '"stop"')
            token = _TOKEN % (model, reason)
            if isinstance(top_k, int):
                token = token.replace('"logprobs":null', '"logprobs":' + _logprobs(i, top_k))
            writer.write(_event(token))
            await writer.drain()
            written.append(time.perf_counter())
        self.timings.request(arrival_s, written)
        options = request.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            prompt_tokens = len(str(request.get("prompt", "")).split())
            writer.write(_event(_USAGE % (model, prompt_tokens, n, prompt_tokens + n)))
        writer.write(_event("[DONE]") + b"0\r\n\r\n")

    async def _pause(self, delay_s: float) -> None:
        """Sleep ``delay_s``, or drop the stream at once when the server stops."""
        assert self._closing is not None  # set by start()
        if delay_s <= 0:
            await asyncio.sleep(0)
            return
        try:
            await asyncio.wait_for(self._closing.wait(), delay_s)
        except asyncio.TimeoutError:  # noqa: UP041 - before 3.11 this is not the builtin TimeoutError
            return
        raise _Dropped


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    """Method, target and body of the next request; None when the client closed the connection."""
    request_line = await reader.readline()
    if not request_line:
        return None
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    method, target = request_line.decode("latin-1").split()[:2]
    return method, target, await reader.readexactly(length)


def _logprobs(i: int, top_k: int) -> str:
    """Token ``i``'s completions logprobs as greedy vLLM sends them: " tok" first of ``top_k``."""
    top = {" tok": -0.1, **{f" alt{j}": -1.0 - j for j in range(1, top_k)}}
    return json.dumps(
        {"text_offset": [4 * i], "token_logprobs": [-0.1], "tokens": [" tok"], "top_logprobs": [top]}
    )


class _Dropped(Exception):
    """Raised to drop a connection mid-stream on purpose."""


def _event(data: str) -> bytes:
    payload = b"data: " + data.encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(payload), payload)


def _respond(
    writer: asyncio.StreamWriter, status: int, body: bytes, content_type: str = "application/json"
) -> None:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    writer.write(head.encode("latin-1") + body)


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted; prints ``listening <url>`` once ready."""
    parser = argparse.ArgumentParser(prog="python tests/nullserver.py", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--first-token-delay-ms", type=float, default=0.0)
    parser.add_argument("--token-delay-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    config = NullConfig(args.first_token_delay_ms / 1000, args.token_delay_ms / 1000)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(NullServer(config, host=args.host, port=args.port)))


async def _serve_forever(server: NullServer) -> None:
    print("listening", await server.start(), flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    main()
