"""Where the load generator runs (a LoadSite) and how it sends one streamed request per trial.

``kvgate.probes.loadgen`` is stdlib-only; by default kvgate ships it to the engine host
(cached by content hash, like the agent) and runs it there, so the lab network does
not distort TTFT. ``engines.<x>.loadgen: controller`` runs it on the control node
instead, against the host's inventory address, when the network path is part of
what a site wants measured. Each trial sends exactly one prompt (``--requests 1``
with the trial's salt); the result JSON keeps every chunk timestamp.

llama-cpp-python sends no ``usage`` when streaming, so completion tokens come from
``finish_reason == "length"`` (the request ran to max_tokens) and prompt tokens
from the engine's own tokenizer; the loadgen's usage-based shape verdict is kept
in the artifact but not used.

>>> zipapp_bytes() == zipapp_bytes()
True
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kvgate.base.errors import LabError
from kvgate.orchestration.g3.arms import Outcome
from kvgate.probes import agentctl
from kvgate.probes.engines import EngineService
from kvgate.probes.loadgen import RequestRecord
from kvgate.transport import Executor, LocalExecutor

# ``loadgen.pyz ARGS`` runs kvgate.probes.loadgen; ``loadgen.pyz sessions ARGS`` the capacity arms' sessions
BOOT = (
    b"import sys\n"
    b"if sys.argv[1:2] == ['sessions']:\n"
    b"    from kvgate.probes.agent.sessions import main\n"
    b"    sys.exit(main(sys.argv[2:]))\n"
    b"from kvgate.probes.loadgen.__main__ import main\n"
    b"sys.exit(main())\n"
)


def zipapp_bytes() -> bytes:
    """The load generator (and the agent's session driver) as a deterministic zipapp (the agent's packer)."""
    return agentctl.pack("loadgen", BOOT, also=("agent", "evidence"))  # the agent imports evidence


def ensure_client(ex: Executor) -> str:
    """Put the zipapp at ``~/.cache/kvgate/loadgen-<sha16>.pyz`` on the host unless it is there."""
    return agentctl.upload(ex, "loadgen", zipapp_bytes())


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
    fixed_output: str | None = "ignore_eos"  # the engine profile's: exactly max_tokens are generated

    def argv(self, out: str) -> list[str]:
        options = {
            "--url": self.url,
            "--model": self.model,
            "--concurrency": "1",
            "--requests": "1",
            "--prompt-tokens": str(self.prompt_tokens),
            "--tokens-per-word": repr(self.tokens_per_word),
            "--max-tokens": str(self.max_tokens),
            "--salt": self.salt,
            "--fixed-output": self.fixed_output or "none",
            "--temperature": "0",
            "--output-tokens-from": "chunks",
            "--timeout": repr(self.timeout_s),
            "--out": out,
        }
        if self.logprobs is not None:
            options["--logprobs"] = str(self.logprobs)
        return [arg for option in options.items() for arg in option]


@dataclass(frozen=True)
class LoadSite:
    """Where the load generator runs, and the address it reaches the engines at from there."""

    ex: Executor
    python: str
    client: str  # the zipapp's path where it runs
    out_dir: str  # where its result documents go, there
    address: str | None = None  # the engine host as the controller reaches it; None: on the host itself

    @property
    def side(self) -> str:
        """``host`` or ``controller``, as the inventory and the report say it."""
        return "host" if self.address is None else "controller"

    def url(self, eng: EngineService) -> str:
        """The engine's base URL as the load generator sees it."""
        return eng.url("") if self.address is None else f"http://{self.address}:{eng.placement.port}"

    def out(self, name: str) -> str:
        return f"{self.out_dir}/{name}"

    def argv_command(self, argv: list[str], out: str) -> tuple[str, list[str]]:
        """The command that runs the client with ``argv`` and prints its result document."""
        full = [self.python, self.client, *argv]
        return " ".join(["%s"] * len(full)) + " && cat %s", [*full, out]

    def drive(
        self, argv: list[str], out: str, *, engines: Sequence[EngineService], what: str, timeout_s: float
    ) -> dict[str, Any]:
        """Run the client with ``argv`` against ``engines``; its result document. When it fails, an
        engine that crashed is the cause (an ERROR with its log tail), else the client's own failure."""
        command, args = self.argv_command(argv, out)
        res = self.ex.run(command, *args, timeout_s=timeout_s)
        if not res.ok:
            for eng in engines:
                eng.ensure_alive()
            raise LabError(f"{self.ex.host}: the {what} ({self.side} side) failed\n{res}")
        doc: dict[str, Any] = json.loads(res.stdout)
        return doc

    def close(self) -> None:
        """Remove the controller's own result directory (on the host it lies in the work directory)."""
        if self.address is not None:
            shutil.rmtree(self.out_dir, ignore_errors=True)

    def warm_up(self) -> None:
        """Import the client once so its own reads stay out of a measured window after a cache drop."""
        self.ex.run("%s %s --help > /dev/null", self.python, self.client, timeout_s=60, check=True)

    def send(self, req: Request, out_name: str) -> tuple[Outcome, str]:
        """Run one request; returns its outcome and the raw result JSON (the artifact)."""
        command, args = self.argv_command(req.argv(self.out(out_name)), self.out(out_name))
        res = self.ex.run(command, *args, timeout_s=req.timeout_s + 60)
        if not res.ok:
            raise LabError(f"{self.ex.host}: the load generator ({self.side} side) failed\n{res}")
        return outcome(json.loads(res.stdout)), res.stdout


def on_host(ex: Executor, python: str, out_dir: str) -> LoadSite:
    """The load generator on the engine host (shipped there), talking to 127.0.0.1."""
    return LoadSite(ex, python, ensure_client(ex), out_dir)


def on_controller(address: str) -> LoadSite:
    """The load generator on this control node, talking to the engine host at ``address``."""
    ex = LocalExecutor()
    local = ensure_client(ex)
    return LoadSite(ex, sys.executable, local, tempfile.mkdtemp(prefix="kvgate-loadgen-"), address)


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
