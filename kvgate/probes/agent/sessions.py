"""Sessions of turns over shared documents (G3's capacity arms), driven next to the engine.

The seed's capacity gains (R2/R3: TTFT ↓26–32 %, throughput +29–40 %) come from reuse:
requests that share a long prefix, the reusable part kept in a tier. Here every one of
``documents`` shared documents is a session; turn *j* of a run is on document
``j mod documents``, so the documents are visited round-robin and a document comes back
only after every other one has (a DRAM tier smaller than the set cannot keep it). A
turn's prompt is its document — the first ``reuse`` share of its tokens, the same words
in every turn — followed by a question of its own:

>>> s = Sessions(salt="r/1", documents=4, prompt_tokens=40, reuse=0.75)
>>> a, b, c, d0 = s.prompt(0), s.prompt(4), s.prompt(1), s.document_text(0)
>>> a.startswith(d0), b.startswith(d0), a == b, c.startswith(d0)
(True, True, False, False)

``python3 loadgen.pyz sessions --first-turn J --turns N ...`` sends turns J..J+N-1 with
at most ``--concurrency`` in flight (the load generator of :mod:`kvgate.probes.loadgen`, as
``vllm bench serve --max-concurrency``) and writes the loadgen's result document, plus
each request's document. With several ``--url``, document *d* always goes to engine
``d mod n`` (its tier holds it), so the documents must split evenly over the engines.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from kvgate.probes.loadgen import (
    FIXED_OUTPUT,
    LoadConfig,
    PromptSpec,
    invalid_reason,
    ratios,
    run,
    write_atomically,
)


@dataclass(frozen=True)
class Sessions:
    """The run's documents and turns: which document turn *j* is on, and its prompt."""

    salt: str
    documents: int
    prompt_tokens: int
    reuse: float  # share of a turn's prompt that is its document
    tokens_per_word: float = 1.0
    # each document's own tokens per word (fitted to its measured length), so it has its share of
    # the prompt exactly and every turn on it starts with the same words; none: tokens_per_word
    document_ratios: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.documents < 1 or not 0 < self.reuse < 1:
            raise ValueError("need documents >= 1 and 0 < reuse < 1")
        if self.document_ratios and len(self.document_ratios) != self.documents:
            raise ValueError(f"{len(self.document_ratios)} document ratios for {self.documents} documents")

    def document(self, turn: int) -> int:
        """The document (session) of turn ``turn``."""
        return turn % self.documents

    def document_spec(self, document: int) -> PromptSpec:
        """Document ``document``'s words: its share of the prompt, at its own tokens per word."""
        ratio = self.document_ratios[document] if self.document_ratios else self.tokens_per_word
        tokens = round(self.prompt_tokens * self.reuse)
        return PromptSpec(f"{self.salt}/document-{document}", tokens, tokens_per_word=ratio)

    def document_text(self, turn: int) -> str:
        """The reusable prefix of turn ``turn``'s prompt: its document, the same in every turn on it."""
        return self.document_spec(self.document(turn)).prompt(0)

    def prompt(self, turn: int) -> str:
        """Turn ``turn``'s prompt: its document, then a question no other turn asks."""
        tokens = self.prompt_tokens - round(self.prompt_tokens * self.reuse)
        question = PromptSpec(f"{self.salt}/question", tokens, tokens_per_word=self.tokens_per_word)
        return f"{self.document_text(turn)} {question.prompt(turn)}"


def main(argv: list[str] | None = None) -> int:
    """Parse, send the turns, write the result document; 0 when written, 2 for bad arguments."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        sessions = Sessions(
            args.salt,
            args.documents,
            args.prompt_tokens,
            args.reuse,
            args.tokens_per_word,
            args.document_ratios,
        )
        config = _config(args)
    except ValueError as exc:
        parser.error(str(exc))
    turns = range(args.first_turn, args.first_turn + args.turns)
    result = run(config, [sessions.prompt(j) for j in turns])
    doc = result.to_dict(output_tokens_from=args.output_tokens_from)
    documents_of = [sessions.document(j) for j in turns]
    doc["sessions"] = {**sessions.__dict__, "first_turn": args.first_turn, "turns": args.turns}
    doc["sessions"]["documents_of"] = documents_of
    doc["workload_invalid_reason"] = invalid_reason(
        result.records, prompt_tokens=args.prompt_tokens, max_tokens=args.max_tokens, tolerance=0.05
    )
    write_atomically(args.out, doc)
    return 0


def _config(args: argparse.Namespace) -> LoadConfig:
    """The load: request i goes to ``urls[i mod n]``; rotated so turn j goes to engine ``j mod n``."""
    n = len(args.url)
    if args.documents % n:
        raise ValueError(f"{args.documents} documents do not split evenly over {n} engines")
    urls = tuple(args.url[args.first_turn % n :] + args.url[: args.first_turn % n])
    return LoadConfig(
        urls=urls,
        model=args.model,
        max_tokens=args.max_tokens,
        max_concurrency=args.concurrency,
        fixed_output=None if args.fixed_output == "none" else args.fixed_output,
        temperature=0.0,
        request_timeout_s=args.timeout,
        logprobs=args.logprobs,
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="loadgen.pyz sessions", description=__doc__.split("\n")[0])
    p.add_argument("--url", action="append", required=True, help="engine base URL; repeat for several")
    p.add_argument("--model", required=True)
    p.add_argument("--concurrency", type=int, required=True, help="turns in flight (sessions at once)")
    p.add_argument("--first-turn", type=int, required=True)
    p.add_argument("--turns", type=int, required=True)
    p.add_argument("--documents", type=int, required=True)
    p.add_argument("--prompt-tokens", type=int, required=True)
    p.add_argument("--reuse", type=float, required=True, help="share of a prompt that is its document")
    p.add_argument("--tokens-per-word", type=float, default=1.0)
    fitted = "each document's own tokens per word (fitted to its length); default: --tokens-per-word"
    p.add_argument("--document-ratios", type=ratios, default=(), metavar="R,R,...", help=fitted)
    p.add_argument("--max-tokens", type=int, required=True)
    p.add_argument("--salt", required=True)
    p.add_argument("--fixed-output", choices=(*FIXED_OUTPUT, "none"), default="ignore_eos")
    p.add_argument("--output-tokens-from", choices=("usage", "chunks"), default="usage")
    p.add_argument("--logprobs", type=int, default=None)
    p.add_argument("--timeout", type=float, default=600.0, help="per request, seconds")
    p.add_argument("--out", required=True)
    return p


if __name__ == "__main__":
    sys.exit(main())
