"""The load generator on the engine host: shipped as a zipapp, one streamed request per trial.

``kvgate.loadgen`` is stdlib-only; kvgate ships it to the engine host (cached by
content hash, like the agent) and runs it there, so the lab network does not
distort TTFT. Each trial sends exactly one prompt (``--requests 1`` with the
trial's salt); the result JSON keeps every chunk timestamp.

llama-cpp-python sends no ``usage`` when streaming, so completion tokens come from
``finish_reason == "length"`` (the request ran to max_tokens) and prompt tokens
from the engine's own tokenizer; the loadgen's usage-based shape verdict is kept
in the artifact but not used.

>>> zipapp_bytes() == zipapp_bytes()
True
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvgate import agentctl
from kvgate.errors import LabError
from kvgate.g3.arms import Outcome
from kvgate.loadgen.record import RequestRecord
from kvgate.transport.base import Executor

BOOT = b"import sys\nfrom kvgate.loadgen.__main__ import main\nsys.exit(main())\n"


def zipapp_bytes() -> bytes:
    """The load generator as a deterministic zipapp (the agent's packer)."""
    return agentctl.pack("loadgen", BOOT)


def ensure_client(ex: Executor, local_dir: Path) -> str:
    """Put the zipapp at ``~/.cache/kvgate/loadgen-<sha16>.pyz`` on the host unless it is there."""
    data = zipapp_bytes()
    local = local_dir / f"loadgen-{hashlib.sha256(data).hexdigest()[:16]}.pyz"
    if not local.exists():
        local_dir.mkdir(parents=True, exist_ok=True)
        local.write_bytes(data)
    return agentctl.upload(ex, "loadgen", local)


@dataclass(frozen=True)
class Request:
    """One streamed completion: where, which prompt (salt + sizes), how long to wait."""

    url: str
    model: str
    salt: str
    prompt_tokens: int
    tokens_per_word: float
    max_tokens: int
    timeout_s: float
    logprobs: int | None = None  # top-k logprobs per generated token (for logprobs_close); None: off

    def argv(self, out: str) -> list[str]:
        top_k = [] if self.logprobs is None else ["--logprobs", str(self.logprobs)]
        return [
            "--url", self.url, "--model", self.model, "--concurrency", "1", "--requests", "1",
            "--prompt-tokens", str(self.prompt_tokens), "--tokens-per-word", repr(self.tokens_per_word),
            "--max-tokens", str(self.max_tokens), "--salt", self.salt, "--no-ignore-eos",
            "--temperature", "0", "--output-tokens-from", "chunks", "--timeout", repr(self.timeout_s),
            "--out", out, *top_k,
        ]  # fmt: skip


def warm_up(ex: Executor, python: str, client: str) -> None:
    """Import the client once so its own reads stay out of a measured window after a cache drop."""
    ex.run("%s %s --help > /dev/null", python, client, timeout_s=60, check=True)


def send(ex: Executor, python: str, client: str, req: Request, out: str) -> tuple[Outcome, str]:
    """Run one request on the host; returns its outcome and the raw result JSON (the artifact)."""
    argv = [python, client, *req.argv(out)]
    res = ex.run(" ".join(["%s"] * len(argv)) + " && cat %s", *argv, out, timeout_s=req.timeout_s + 60)
    if not res.ok:
        raise LabError(f"{ex.host}: the load generator failed\n{res}")
    return outcome(json.loads(res.stdout)), res.stdout


def outcome(document: dict[str, Any]) -> Outcome:
    """The single request of a loadgen result as an Outcome (seconds, text, finish reason, logprobs)."""
    records = document.get("records") or []
    if len(records) != 1:
        raise LabError(f"the load generator returned {len(records)} records for one request")
    r = RequestRecord.from_dict(records[0])
    logprobs = tuple(r.logprobs)
    if not r.success:
        return Outcome(None, None, r.text, r.finish_reason, len(r.chunk_ns), r.error or "failed", logprobs)
    return Outcome(
        r.ttft_ms / 1000, r.e2el_ms / 1000, r.text, r.finish_reason, len(r.chunk_ns), logprobs=logprobs
    )
