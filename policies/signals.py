"""Signals beyond cosine that tell a paraphrase from a question that only looks similar.

Pure functions of two texts: lexical overlap, words added or swapped, numbers and named things, negation,
question word, person, tense, word order, length. The calibrated evaluator in `policies.thresholds`
weighs them with cosine; `policies.differences` holds the hard vetoes.
"""
from __future__ import annotations

import math
from dataclasses import astuple, dataclass
from itertools import pairwise

import numpy as np

from policies.differences import negated
from policies.tokens import content, names, numbers, past, person, question_word, words


@dataclass(frozen=True)
class Signals:
    cosine: float
    cosine_over_90: float        # max(0, cosine - 0.9): the top of the range, where decisions are made
    lexical_overlap: float       # Jaccard of content words
    numbers_differ: float        # 1 when the sets of numbers differ
    names_differ: float          # share of named things (capitalised words, acronyms) not in both
    negation_differs: float      # 1 when one text negates and the other does not
    question_word_differs: float
    length_ratio: float          # shorter / longer, in words
    content_words_differ: float  # log(1 + content words in one text only)
    bigram_overlap: float        # Jaccard of word bigrams: word order matters
    order_differs: float         # same words, other order ("from A to B" vs "from B to A")
    person_differs: float        # "how did you ..." vs "how do I ...": asking someone else
    tense_differs: float         # "did" / "was" on one side only
    words_added: float           # log(1 + content words one side adds beyond what the other swaps)
    words_swapped: float         # log(1 + content words replaced on both sides): paraphrase or a new subject
    log_length: float            # log(1 + words of the shorter text)

    def vector(self) -> list[float]:
        return list(astuple(self))


FEATURES = tuple(Signals.__dataclass_fields__)


def pair_features(a: str, b: str, cosine: float, va: np.ndarray | None = None, vb: np.ndarray | None = None,
                  dim: int = 0) -> np.ndarray:
    """The evaluator's input: the named signals, then |va - vb| and va * vb when `dim` asks for them
    (the embedding's own view of what differs, which cosine sums away)."""
    named = np.asarray(signals(a, b, cosine).vector(), dtype=np.float64)
    if not dim:
        return named
    if va is None or vb is None:
        raise ValueError("this policy needs both embeddings")
    return np.concatenate([named, np.abs(va - vb), va * vb])


def signals(a: str, b: str, cosine: float) -> Signals:
    words_a, words_b = words(a), words(b)
    content_a, content_b = content(words_a), content(words_b)
    only_a, only_b = len(content_a - content_b), len(content_b - content_a)
    return Signals(
        cosine=cosine,
        cosine_over_90=max(0.0, cosine - 0.9),
        lexical_overlap=jaccard(content_a, content_b),
        numbers_differ=float(numbers(a) != numbers(b)),
        names_differ=1.0 - jaccard(names(a), names(b)),
        negation_differs=float(negated(words_a) != negated(words_b)),
        question_word_differs=float(question_word(words_a) != question_word(words_b)),
        length_ratio=min(len(words_a), len(words_b)) / max(1, len(words_a), len(words_b)),
        content_words_differ=math.log1p(only_a + only_b),
        bigram_overlap=jaccard(bigrams(words_a), bigrams(words_b)),
        order_differs=order_change(words_a, words_b),
        person_differs=float(person(words_a) != person(words_b)),
        tense_differs=float(past(words_a) != past(words_b)),
        words_added=math.log1p(abs(only_a - only_b)),
        words_swapped=math.log1p(min(only_a, only_b)),
        log_length=math.log1p(min(len(words_a), len(words_b))),
    )


def bigrams(tokens: list[str]) -> set[str]:
    return {f"{a} {b}" for a, b in pairwise(tokens)}


def order_change(a: list[str], b: list[str]) -> float:
    """Shared words that the longest common subsequence cannot line up, as a share of the shared words."""
    shared = set(a) & set(b)
    seq_a, seq_b = [t for t in a if t in shared], [t for t in b if t in shared]
    if not seq_a or not seq_b:
        return 0.0
    return 1.0 - lcs(seq_a, seq_b) / min(len(seq_a), len(seq_b))


def lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            prev, row[j + 1] = row[j + 1], prev + 1 if x == y else max(row[j + 1], row[j])
    return row[-1]


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
