"""Signals beyond cosine that tell a paraphrase from a question that only looks similar.

Pure functions of two texts: lexical overlap, numbers and named things that differ, negation, question
word, length ratio. The calibrated evaluator in `policies.thresholds` weighs them with cosine.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NAME = re.compile(r"\b(?:[A-Z][a-zA-Z0-9]+|[A-Z]{2,}[a-z]?)\b")
_NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "without",
                        "cannot", "can't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't",
                        "weren't", "won't", "wouldn't", "shouldn't", "couldn't", "haven't", "hasn't"})
_QUESTION_WORDS = frozenset({"what", "why", "how", "when", "where", "who", "whom", "whose", "which",
                             "can", "could", "should", "would", "is", "are", "do", "does", "did", "will"})
_STOP = frozenset(["a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "was", "were", "be", "been", "do", "does", "did", "i", "you", "we", "it", "my", "your", "me", "what", "how", "why", "when", "where", "who", "which", "that", "this", "these", "those", "with", "at", "by", "from", "as", "can", "could", "should", "would", "will", "some", "any", "there", "their", "its", "about", "into", "if", "so"])

FEATURES = ("cosine", "cosine_over_90", "lexical_overlap", "numbers_differ", "names_differ",
            "negation_differs", "question_word_differs", "length_ratio", "content_words_differ",
            "bigram_overlap", "order_differs")


@dataclass(frozen=True)
class Signals:
    cosine: float
    lexical_overlap: float       # Jaccard of content words
    numbers_differ: float        # 1 when the sets of numbers differ
    names_differ: float          # share of named things (capitalised words, acronyms) not in both
    negation_differs: float      # 1 when one text negates and the other does not
    question_word_differs: float
    length_ratio: float          # shorter / longer, in words
    content_words_differ: float  # log(1 + content words in one text only)
    bigram_overlap: float        # Jaccard of word bigrams: word order matters
    order_differs: float         # same words, other order ("from A to B" vs "from B to A")

    def vector(self) -> list[float]:
        return [self.cosine, max(0.0, self.cosine - 0.9), self.lexical_overlap, self.numbers_differ,
                self.names_differ, self.negation_differs, self.question_word_differs, self.length_ratio,
                self.content_words_differ, self.bigram_overlap, self.order_differs]


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
    return Signals(
        cosine=cosine,
        lexical_overlap=jaccard(content_a, content_b),
        numbers_differ=float(set(_NUMBER.findall(a)) != set(_NUMBER.findall(b))),
        names_differ=1.0 - jaccard(names(a), names(b)),
        negation_differs=float(negated(words_a) != negated(words_b)),
        question_word_differs=float(question_word(words_a) != question_word(words_b)),
        length_ratio=min(len(words_a), len(words_b)) / max(1, len(words_a), len(words_b)),
        content_words_differ=math.log1p(len(content_a ^ content_b)),
        bigram_overlap=jaccard(bigrams(words_a), bigrams(words_b)),
        order_differs=order_change(words_a, words_b),
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


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def content(tokens: list[str]) -> set[str]:
    return {stem(t) for t in tokens if t not in _STOP}


def stem(token: str) -> str:
    """A crude plural/suffix fold so 'books' and 'book' count as one word."""
    for suffix in ("ing", "es", "s"):
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def names(text: str) -> set[str]:
    first = re.match(r"\s*\w+", text)
    start = first.end() if first else 0
    return {n.lower() for n in _NAME.findall(text[start:])}


def negated(tokens: list[str]) -> bool:
    return sum(t in _NEGATIONS or t.endswith("n't") for t in tokens) % 2 == 1


def question_word(tokens: list[str]) -> str:
    return next((t for t in tokens[:3] if t in _QUESTION_WORDS), "")


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
