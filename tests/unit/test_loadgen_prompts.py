"""Salted prompts: deterministic, private to their salt, with the shared prefix they promise."""

from __future__ import annotations

import pytest

from kvgate.probes.loadgen import PromptSpec, fit_tokens_per_word
from kvgate.probes.loadgen.prompts import WORDS


def common_prefix_words(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split(), b.split()):  # noqa: B905 - prompts may differ in length
        if x != y:
            break
        n += 1
    return n


def ngrams(text: str, n: int = 8) -> set[tuple[str, ...]]:
    words = text.split()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def test_same_salt_and_index_give_the_same_prompt() -> None:
    a = PromptSpec(salt="run-7/arm-a", prompt_tokens=500, reuse=0.5, group_size=4)
    b = PromptSpec(salt="run-7/arm-a", prompt_tokens=500, reuse=0.5, group_size=4)
    assert a.prompts(8) == b.prompts(8)
    assert a.prompt(5) == b.prompts(6)[5]
    assert set(" ".join(a.prompts(8)).split()) <= set(WORDS)  # common words only


def test_different_salts_share_nothing() -> None:
    one = PromptSpec(salt="run-1", prompt_tokens=2000, reuse=0.8, group_size=8).prompts(16)
    two = PromptSpec(salt="run-2", prompt_tokens=2000, reuse=0.8, group_size=8).prompts(16)
    grams_one = set().union(*(ngrams(p) for p in one))
    grams_two = set().union(*(ngrams(p) for p in two))
    assert not grams_one & grams_two  # not even one 8-word run in common, anywhere
    assert max(common_prefix_words(a, b) for a in one for b in two) < 4


def test_groups_share_exactly_their_prefix() -> None:
    spec = PromptSpec(salt="s", prompt_tokens=1000, reuse=0.75, group_size=4)
    prompts = spec.prompts(8)
    assert spec.prefix_words == 750
    for i in range(1, 4):  # same group as prompt 0
        assert common_prefix_words(prompts[0], prompts[i]) == 750
    assert common_prefix_words(prompts[0], prompts[4]) < 4  # next group: its own prefix
    assert common_prefix_words(prompts[4], prompts[7]) == 750
    assert all(len(p.split()) == 1000 for p in prompts)


def test_suffixes_are_unique_within_a_group() -> None:
    prompts = PromptSpec(salt="s", prompt_tokens=400, reuse=0.5, group_size=4).prompts(4)
    suffixes = [" ".join(p.split()[200:]) for p in prompts]
    assert len(set(suffixes)) == 4
    assert not ngrams(suffixes[0]) & ngrams(suffixes[1])


def test_reuse_bounds() -> None:
    none = PromptSpec(salt="s", prompt_tokens=100, reuse=0.0, group_size=4).prompts(2)
    assert common_prefix_words(none[0], none[1]) < 4
    full = PromptSpec(salt="s", prompt_tokens=100, reuse=1.0, group_size=4).prompts(2)
    assert full[0] == full[1]


def test_word_count_follows_the_tokens_per_word_ratio() -> None:
    spec = PromptSpec(salt="s", prompt_tokens=2000, tokens_per_word=1.25)
    assert len(spec.prompt(0).split()) == 1600
    assert fit_tokens_per_word(spec, measured_prompt_tokens=1800) == pytest.approx(1.125)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"salt": ""}, "a salt is required"),
        ({"salt": "s", "reuse": 1.5}, "reuse must be within"),
        ({"salt": "s", "group_size": 0}, "must be > 0"),
        ({"salt": "s", "tokens_per_word": 0}, "must be > 0"),
    ],
)
def test_bad_specs_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PromptSpec(prompt_tokens=10, **kwargs)  # type: ignore[arg-type]


def test_a_prompt_refitted_to_its_own_length_keeps_its_words_and_changes_only_its_end() -> None:
    spec = PromptSpec(salt="fit", prompt_tokens=100)  # 100 words at 1 token per word
    plain, (fitted, other) = spec.prompts(2), spec.prompts(2, [1.25])  # prompt 0 counted 125 tokens
    assert fitted.split() == plain[0].split()[:80]  # a prefix of the same draw: 100 / 1.25 words
    assert other == plain[1]  # prompts without a fit keep the spec's ratio
    assert fit_tokens_per_word(spec, 125) == 1.25
