"""Words of a question as the vetoes read them: contractions expanded, with or without an apostrophe."""
from __future__ import annotations

from policies.tokens import words


def test_contractions_expand_and_plain_words_stay_whole():
    assert words("I cannot log in, can't you help?") == ["i", "can", "not", "log", "in", "can", "not", "you", "help"]
    assert words("What\u2019s wrong? It's John's card, we'd like it") == \
        ["what", "is", "wrong", "it", "is", "john", "card", "we", "would", "like", "it"]
    assert words("don't won't let's I'm they've he'll") == \
        ["do", "not", "will", "not", "let", "us", "i", "am", "they", "have", "he", "will"]


def test_the_expansions_are_not_shared_between_calls():
    first = words("cannot")
    first.append("changed")
    assert words("cannot") == ["can", "not"]
