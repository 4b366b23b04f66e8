"""Deterministic long prompts with a controlled shared-prefix structure, unique to a per-run salt.

Prompt *i* belongs to group ``i // group_size``. Its first ``reuse`` fraction of
words is the group's shared prefix; the rest is unique to *i*. Every word comes
from a fixed list of common English words (one token each in the usual BPE and
SentencePiece vocabularies when preceded by a space), drawn by
``random.Random`` seeded with a string built from the salt, so:

- the same ``(salt, index)`` always gives the same prompt, on any host and Python;
- two salts share nothing, so no earlier run or other arm can hit the cache
  (vllm #54227, #52884: reused seeds across sweep cells hit the prefix cache).

Lengths are set in tokens and approximated in words through ``tokens_per_word``;
measure the real ratio once with :func:`fit_tokens_per_word` from a response's
``usage.prompt_tokens``.

>>> spec = PromptSpec(salt="run-1", prompt_tokens=8, reuse=0.5, group_size=2)
>>> a, b, c = spec.prompts(3)
>>> a.split()[:4] == b.split()[:4], a.split()[:4] == c.split()[:4]
(True, False)
>>> spec.prompt(0) == PromptSpec(salt="run-1", prompt_tokens=8, reuse=0.5, group_size=2).prompt(0)
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

_WORD_TEXT = """
    the of and to in is was for on that with as by at from his her they this which
    people time year way day man thing woman life child world school state family
    student group country problem hand part place case week company system program
    question work government number night point home water room mother area money
    story fact month lot right study book eye job word business issue side kind head
    house service friend father power hour game line end member law car city name
    president team minute idea kid body information back parent face others level
    office door health person art war history party result change morning reason
    research girl guy moment air teacher force education good new first last long
    great little own other old big high different small large next early young
    important few public bad same able make know take see come think look want give
    use find tell ask seem feel try leave call keep let begin help show hear play
    run move like live believe hold bring happen write sit stand lose pay meet
    include continue set learn lead understand watch follow stop create speak read
    spend grow open walk win offer remember love consider appear buy wait serve die
    send build stay fall cut reach kill remain suggest raise pass sell decide return
    explain hope develop carry break receive agree support hit produce eat cover
    catch draw choose garden window table paper music letter color road light
    voice field village market island forest bridge river summer winter spring
    autumn ocean mountain valley street train plane horse bird fish tree flower
    stone glass bread milk coffee dinner kitchen doctor nurse farmer driver writer
    painter singer artist engine machine signal answer reader harbor
"""
WORDS = tuple(_WORD_TEXT.split())  # 290 distinct words; order is part of the prompt format


@dataclass(frozen=True)
class PromptSpec:
    """How to build the prompts of one run: salt, target length and prefix sharing."""

    salt: str
    prompt_tokens: int
    reuse: float = 0.0  # fraction of each prompt that is its group's shared prefix
    group_size: int = 1  # prompts per shared-prefix group
    tokens_per_word: float = 1.0  # tokens the server counts per word of this text

    def __post_init__(self) -> None:
        if not self.salt:
            raise ValueError("a salt is required: without it runs would share prompts")
        if self.prompt_tokens <= 0 or self.group_size <= 0 or self.tokens_per_word <= 0:
            raise ValueError("prompt_tokens, group_size and tokens_per_word must be > 0")
        if not 0.0 <= self.reuse <= 1.0:
            raise ValueError(f"reuse must be within [0, 1], got {self.reuse}")

    @property
    def words(self) -> int:
        """Words per prompt."""
        return max(1, round(self.prompt_tokens / self.tokens_per_word))

    @property
    def prefix_words(self) -> int:
        """Words of each prompt that its group shares."""
        return round(self.words * self.reuse)

    def prompt(self, index: int) -> str:
        """Prompt number ``index`` (0-based)."""
        if index < 0:
            raise ValueError(f"prompt index must be >= 0, got {index}")
        prefix = _draw(f"{self.salt}\x00prefix\x00{index // self.group_size}", self.prefix_words)
        unique = _draw(f"{self.salt}\x00unique\x00{index}", self.words - self.prefix_words)
        return " ".join(prefix + unique)

    def prompts(self, n: int, fitted: Sequence[float] = ()) -> list[str]:
        """Prompts ``0 .. n-1``; prompt i with ``fitted[i]`` tokens per word where given.

        A prompt's words are a prefix-stable draw: refitted to its own measured length
        (fit_tokens_per_word of that prompt), it keeps its words and gains or loses a few at
        the end, landing within a few tokens of the target.
        """
        return [
            replace(self, tokens_per_word=fitted[i]).prompt(i) if i < len(fitted) else self.prompt(i)
            for i in range(n)
        ]


def fit_tokens_per_word(spec: PromptSpec, measured_prompt_tokens: int) -> float:
    """The ratio that makes ``spec``'s prompts hit their target, from one measured prompt.

    >>> fit_tokens_per_word(PromptSpec(salt="s", prompt_tokens=100), 125)
    1.25
    """
    if measured_prompt_tokens <= 0:
        raise ValueError("measured_prompt_tokens must be > 0")
    return measured_prompt_tokens / spec.words


def _draw(seed: str, n: int) -> list[str]:
    """``n`` words from a RNG seeded by ``seed`` (str seeds hash with SHA-512: stable everywhere)."""
    return random.Random(seed).choices(WORDS, k=n)
