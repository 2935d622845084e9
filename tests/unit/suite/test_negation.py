"""T-2's negation rule, as properties: a negation in the mention's own sentence within 60 characters takes
the claim back; anything farther, in another sentence, or after the mention does not."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from suite.clauses import NEGATION_WINDOW, NEGATIONS, asserted, present

CLAUSE = "off-by-one"
# Filler that holds no sentence end, no negation word and no mention: lower-case letters and spaces.
filler = st.text(alphabet="abcdefghijklmopqrstuvwxyz ", max_size=200).filter(
    lambda s: not any(f" {w} " in f" {s} " for w in NEGATIONS) and CLAUSE not in s and "n't" not in s
)
negation = st.sampled_from([*NEGATIONS, "isn't", "doesn't"])
# The machine is shared: an example's time says nothing about the rule.
relaxed = settings(deadline=None)


@relaxed
@given(before=filler, word=negation, gap=filler, after=filler)
def test_a_negation_close_before_the_mention_takes_it_back(
    before: str, word: str, gap: str, after: str
) -> None:
    gap = gap[: NEGATION_WINDOW - len(word) - 2]
    text = f"{before} {word} {gap} {CLAUSE} {after}"
    assert present(CLAUSE, text)
    assert not asserted(CLAUSE, text)


@relaxed
@given(word=negation, gap=filler, after=filler)
def test_a_negation_in_the_previous_sentence_does_not(word: str, gap: str, after: str) -> None:
    text = f"There is {word} {gap[:20]}. Then an {CLAUSE} {after}"
    assert asserted(CLAUSE, text)


@relaxed
@given(word=negation, pad=st.integers(min_value=1, max_value=50), after=filler)
def test_a_negation_beyond_the_window_does_not(word: str, pad: int, after: str) -> None:
    text = f"{word} " + "x" * (NEGATION_WINDOW + pad) + f" {CLAUSE} {after}"
    assert asserted(CLAUSE, text)


@relaxed
@given(before=filler, word=negation, after=filler)
def test_a_negation_after_the_mention_does_not(before: str, word: str, after: str) -> None:
    text = f"{before}. The {CLAUSE} is real, {word} doubt {after}"
    assert asserted(CLAUSE, text)


@relaxed
@given(first=filler, word=negation, second=filler)
def test_one_bare_mention_is_enough_whatever_else_is_negated(first: str, word: str, second: str) -> None:
    text = f"There is {word} {CLAUSE} here. {first}. But this {CLAUSE} {second}"
    assert asserted(CLAUSE, text)


@relaxed
@given(text=st.text(max_size=300))
def test_without_a_mention_nothing_is_asserted(text: str) -> None:
    if not present(CLAUSE, text):
        assert not asserted(CLAUSE, text)


def test_words_are_read_whole() -> None:
    assert asserted(CLAUSE, f"I know an {CLAUSE} is here")  # the `no` of `know`
    assert asserted(CLAUSE, f"a nothingness-free {CLAUSE}")  # `nothing` only as a word
    assert not asserted(CLAUSE, f"I cannot find an {CLAUSE}")
