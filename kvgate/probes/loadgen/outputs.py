"""Are two greedy outputs the same up to a near-tie? vLLM's ``check_logprobs_close``, per request.

G3 compares each cached arm's outputs with recompute's, G4 each window's canary with the first.

On an engine that is not batch-invariant, a cache hit and a full prefill may
round differently and flip a near-tied token; from there the two outputs
diverge. vLLM's own tests accept that (vllm-project/vllm ``tests/models/utils.py``
@002b4cf80b730f384dbc7d5f85db8a10b14af56a, ``check_logprobs_close`` with its
defaults): walk both token sequences; at the first position where the tokens
differ, each side's token must be among the other side's top logprobs there;
then stop comparing. kvgate is stricter in two ways: missing logprobs are never
"close", and sequences of different lengths that agree on every shared token
are a mismatch (upstream compares only the shared part).

Tokens are compared by the text the server reports for them (OpenAI completions
``logprobs.tokens`` and the keys of ``top_logprobs``).

>>> a = [TokenLogprob(" x", -0.1, {" x": -0.1}), TokenLogprob(" y", -0.70, {" y": -0.70, " z": -0.71})]
>>> b = [TokenLogprob(" x", -0.1, {" x": -0.1}), TokenLogprob(" z", -0.69, {" z": -0.69, " y": -0.70})]
>>> logprobs_close(a, b) is None
True
>>> print(logprobs_close(a, b[:1]))
cached generated 1 tokens, recompute 2, identical over the first 1
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kvgate.probes.loadgen.record import TokenLogprob


@dataclass(frozen=True)
class Divergence:
    """The first position where two token sequences differ, with both sides' logprobs there."""

    position: int
    expected: TokenLogprob
    got: TokenLogprob

    @property
    def close(self) -> bool:
        """Each side's token is among the other side's top logprobs (vLLM's rule)."""
        return self.got.token in self.expected.top and self.expected.token in self.got.top

    def describe(self, expected_name: str, got_name: str) -> str:
        """One line: ``token 7: recompute ' a' (-1.2000) vs cached ' b' (-1.2100); ' b' in …``."""
        e, g = self.expected, self.got
        return (
            f"token {self.position}: {expected_name} {e.token!r} ({_lp(e.logprob)}) vs "
            f"{got_name} {g.token!r} ({_lp(g.logprob)}); "
            f"{_membership(g.token, e, expected_name)}; {_membership(e.token, g, got_name)}"
        )


def first_divergence(expected: Sequence[TokenLogprob], got: Sequence[TokenLogprob]) -> Divergence | None:
    """The first shared position whose tokens differ; None when the shared part is identical."""
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        if e.token != g.token:
            return Divergence(i, e, g)
    return None


def logprobs_close(
    expected: Sequence[TokenLogprob],
    got: Sequence[TokenLogprob],
    *,
    expected_name: str = "recompute",
    got_name: str = "cached",
) -> str | None:
    """None when ``got`` matches ``expected`` up to a near-tie flip, else why not (one line)."""
    if not expected or not got:
        return (
            f"logprobs were not recorded ({expected_name}: {len(expected)} tokens, "
            f"{got_name}: {len(got)} tokens): request them with logprobs=K"
        )
    split = first_divergence(expected, got)
    if split is None:
        if len(expected) == len(got):
            return None
        shared = min(len(expected), len(got))
        return (
            f"{got_name} generated {len(got)} tokens, {expected_name} {len(expected)}, "
            f"identical over the first {shared}"
        )
    where = split.describe(expected_name, got_name)
    if not split.expected.top or not split.got.top:
        return f"logprobs were not recorded at the first differing token: {where}"
    return None if split.close else f"not a near-tie: {where}"


def _membership(token: str, where: TokenLogprob, name: str) -> str:
    value = where.top.get(token)
    found = "no" if value is None else f"yes ({value:.4f})"
    return f"{token!r} in {name}'s top {len(where.top)}: {found}"


def _lp(value: float | None) -> str:
    return "logprob ?" if value is None else f"{value:.4f}"


@dataclass(frozen=True)
class Output:
    """One request's greedy output: its text and, when asked for, each token's top-k logprobs."""

    text: str
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True)
class Comparison:
    """Outputs compared with the ones they must equal: how many, which differed, which only at a near-tie
    (tolerated). Added up over arms and loads, so a verdict of "0 mismatches" says of how many."""

    compared: int = 0
    mismatches: tuple[str, ...] = ()
    near_ties: tuple[str, ...] = ()

    def __add__(self, other: Comparison) -> Comparison:
        return Comparison(
            self.compared + other.compared,
            self.mismatches + other.mismatches,
            self.near_ties + other.near_ties,
        )

    def named(self, prefix: str) -> Comparison:
        """Each mismatch and near-tie said with ``prefix`` (the arm) before its key."""
        return Comparison(
            self.compared,
            tuple(prefix + m for m in self.mismatches),
            tuple(prefix + m for m in self.near_ties),
        )


def compare_outputs(
    expected: dict[str, Output],
    got: dict[str, Output],
    *,
    got_name: str = "cached",
    expected_name: str = "recompute",
) -> Comparison:
    """Each output of ``got`` against the computed output ``expected`` holds under its key.

    Equal texts agree. Different texts are a near-tie, tolerated and listed apart, when they
    first diverge at a token each side had in the other's top-k logprobs (vLLM's
    ``check_logprobs_close``: a cache hit or another batch may round a near-tie the other
    way); anything else is a mismatch.

    >>> a = TokenLogprob(" a", -0.69, {" a": -0.69, " b": -0.70})
    >>> b = TokenLogprob(" b", -0.69, {" b": -0.69, " a": -0.70})
    >>> compare_outputs({"s": Output(" a", (a,))}, {"s": Output(" b", (b,))}).mismatches
    ()
    >>> found = compare_outputs({"s": Output("x y")}, {"s": Output("x q"), "t": Output("z")})
    >>> found.compared, found.mismatches[1]
    (2, 't: no recompute output to compare with')
    """
    bad, ties = [], []
    for key, out in sorted(got.items()):
        want = expected.get(key)
        if want is None:
            bad.append(f"{key}: no {expected_name} output to compare with")
            continue
        if want.text == out.text:
            continue
        shown = f"{key}: expected {want.text!r}, got {out.text!r}"
        why = logprobs_close(want.logprobs, out.logprobs, expected_name=expected_name, got_name=got_name)
        split = first_divergence(want.logprobs, out.logprobs) if why is None else None
        if split is not None:
            ties.append(f"{shown} — near-tie at {split.describe(expected_name, got_name)}")
        else:
            bad.append(f"{shown} — {why or 'the texts differ where the tokens agree'}")
    return Comparison(len(got), tuple(bad), tuple(ties))
