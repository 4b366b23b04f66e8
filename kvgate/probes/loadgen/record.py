"""What the load generator records about one request, and the per-request metrics derived from it.

The derivations are those of ``vllm bench serve``
(vllm-project/vllm ``vllm/benchmarks/lib/endpoint_request_func.py`` @02cfb534df5674737558730b10f23d1b7aef9b7c,
``async_request_openai_completions``):

- the send time ``st`` is taken just before the HTTP request goes out (after the
  client's concurrency semaphore is acquired);
- every SSE event whose ``choices`` is non-empty is a token chunk (its text may be
  empty, "e.g. for special tokens"), stamped ``t`` once its JSON is decoded (so two
  events in one network read get two times); the first one gives ``ttft = t - st``,
  each later one appends ``t - previous`` to ``itl``;
- ``latency`` (E2EL) ends at the *last token chunk*, not at ``[DONE]`` or the
  trailing usage-only chunk;
- ``usage.completion_tokens`` / ``usage.prompt_tokens`` come from the chunk that
  carries usage (kvgate keeps the last one seen).

With ``logprobs: K`` in the request, each token chunk's ``choices[0].logprobs``
(OpenAI completions: ``tokens``, ``token_logprobs``, ``top_logprobs``) adds one
:class:`TokenLogprob` per token it lists; a chunk may list several.

Times are integer nanoseconds of ``time.perf_counter_ns`` relative to the run's
start, so a stored record can be re-analysed offline.

>>> r = RequestRecord(index=0, endpoint="http://h:8000", send_ns=0, chunk_ns=[2_000_000, 3_000_000])
>>> r.ttft_ms, r.itl_ms, r.e2el_ms
(2.0, [1.0], 3.0)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, NoReturn

NS_PER_MS = 1_000_000
TOKEN_SOURCES = ("usage", "chunks")


class MissingUsage(ValueError):
    """A successful request carried no ``usage`` although its token counts were needed."""


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token as the server reported it: its text, its logprob, the top alternatives.

    ``top`` maps token text to logprob; vLLM and llama-cpp-python list the top K
    and the sampled token (so K or K + 1 entries). Tokens are keyed by their
    decoded text, so two ids that decode alike share one entry.
    """

    token: str
    logprob: float | None
    top: dict[str, float] = field(default_factory=dict)


@dataclass
class RequestRecord:
    """One request: when it was due, sent, and streamed; what came back; whether it failed."""

    index: int
    endpoint: str
    arrival_ns: int = 0  # the schedule released it (before the concurrency semaphore)
    send_ns: int = 0  # vLLM's start_time: the request is about to be written
    chunk_ns: list[int] = field(default_factory=list)  # arrival of each token chunk
    done_ns: int = 0  # the response ended (or failed)
    status: int = 0  # HTTP status; 0 when no response head arrived
    success: bool = False
    error: str = ""
    prompt_tokens: int | None = None  # from usage
    completion_tokens: int | None = None  # from usage
    finish_reason: str | None = None
    text: str = ""
    logprobs: list[TokenLogprob] = field(default_factory=list)  # one per generated token, when asked

    @property
    def ttft_ms(self) -> float:
        """Time to first token chunk, from the send time."""
        return (self._first_chunk_ns() - self.send_ns) / NS_PER_MS

    @property
    def e2el_ms(self) -> float:
        """End-to-end latency: send time to the last token chunk (vLLM ``latency``)."""
        return (self.chunk_ns[-1] - self.send_ns) / NS_PER_MS if self.chunk_ns else self._no_chunk()

    @property
    def itl_ms(self) -> list[float]:
        """Gaps between consecutive token chunks (vLLM ``itl``)."""
        c = self.chunk_ns
        return [(c[i] - c[i - 1]) / NS_PER_MS for i in range(1, len(c))]

    @property
    def client_queue_ms(self) -> float:
        """Time spent waiting for a concurrency slot (vLLM ``client_queue_time``)."""
        return (self.send_ns - self.arrival_ns) / NS_PER_MS

    def output_tokens(self, source: str = "usage") -> int:
        """Completion tokens from ``usage`` or, when asked explicitly, the token-chunk count."""
        if source == "chunks":
            return len(self.chunk_ns)
        if self.completion_tokens is None:
            raise MissingUsage(
                f"request {self.index} to {self.endpoint} carried no usage.completion_tokens "
                "(does the server honour stream_options.include_usage?)"
            )
        return self.completion_tokens

    def tpot_ms(self, output_tokens: int) -> float | None:
        """``(latency - ttft) / (output_tokens - 1)``; None when output_tokens <= 1, as in vLLM."""
        if output_tokens <= 1:
            return None
        return (self.e2el_ms - self.ttft_ms) / (output_tokens - 1)

    def shift(self, origin_ns: int) -> None:
        """Re-base every timestamp on ``origin_ns`` (the run's start)."""
        self.arrival_ns -= origin_ns
        self.send_ns -= origin_ns
        self.done_ns -= origin_ns
        self.chunk_ns = [t - origin_ns for t in self.chunk_ns]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable copy."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RequestRecord:
        """The inverse of :meth:`to_dict` (unknown keys are an error; no ``logprobs`` → none)."""
        fields = dict(data)
        fields["logprobs"] = [TokenLogprob(**t) for t in fields.get("logprobs") or []]
        return cls(**fields)

    def _first_chunk_ns(self) -> int:
        return self.chunk_ns[0] if self.chunk_ns else self._no_chunk()

    def _no_chunk(self) -> NoReturn:
        raise ValueError(f"request {self.index} received no token chunk: TTFT/latency undefined")
