"""How close a small model's answer comes to the large model's: ROUGE-L (longest common word subsequence,
F1), embedding cosine (MiniLM), and exact match after normalising case, punctuation and articles, scored
only where the large answer is short (a short factual answer either matches or it does not).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from policies.signals import lcs

WORDS = re.compile(r"\w+")
ARTICLES = {"a", "an", "the"}
SHORT_WORDS = 8          # a large answer of at most this many words is "short": exact match applies


def words(text: str) -> list[str]:
    return WORDS.findall(text.lower())


def rouge_l(candidate: str, reference: str) -> float:
    c, r = words(candidate), words(reference)
    common = lcs(c, r)
    if not common:
        return 0.0
    precision, recall = common / len(c), common / len(r)
    return 2 * precision * recall / (precision + recall)


def normalized(text: str) -> str:
    return " ".join(w for w in words(text) if w not in ARTICLES)


def is_short(reference: str) -> bool:
    return 0 < len(words(reference)) <= SHORT_WORDS


def exact_match(candidate: str, reference: str) -> bool:
    return normalized(candidate) == normalized(reference)


def cosines(embed, candidates: list[str], references: list[str]) -> list[float]:
    """Row-wise cosine of the two lists' embeddings; `embed(texts)` returns an [N, D] array."""
    a, b = np.asarray(embed(candidates), dtype=np.float32), np.asarray(embed(references), dtype=np.float32)
    a /= np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b /= np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return [float(x) for x in (a * b).sum(axis=1)]


def minilm_embed():
    """The gateway's own sentence embedder (packaged all-MiniLM-L6-v2), as a plain function."""
    from cachegate.cache.semantic.embedder import PACKAGED, load_model
    model = load_model(PACKAGED, "float32")
    return lambda texts: model.encode(texts, batch_size=64, convert_to_numpy=True, show_progress_bar=False)


@dataclass(frozen=True)
class Agreement:
    rouge_l: float
    similarity: float | None        # None when no embedder was given
    exact: bool | None              # None when the large answer is not short

    def agrees(self, at: float) -> bool:
        """Agreement of one answer: embedding cosine at or above `at` (ROUGE-L without an embedder)."""
        return (self.similarity if self.similarity is not None else self.rouge_l) >= at


def agreements(candidates: list[str], references: list[str], embed=None) -> list[Agreement]:
    sims = cosines(embed, candidates, references) if embed is not None and candidates else [None] * len(candidates)
    return [Agreement(rouge_l(c, r), s, exact_match(c, r) if is_short(r) else None)
            for c, r, s in zip(candidates, references, sims)]


def summary(rows: list[Agreement], at: float) -> dict:
    short = [r.exact for r in rows if r.exact is not None]
    sims = [r.similarity for r in rows if r.similarity is not None]
    return {"n": len(rows), "rouge_l": mean([r.rouge_l for r in rows]), "similarity": mean(sims) if sims else None,
            "exact_match": mean(short) if short else None, "short_answers": len(short),
            "agree_rate": mean([r.agrees(at) for r in rows]), "agree_at": at}


def mean(values) -> float:
    values = list(values)
    return round(float(sum(values)) / len(values), 4) if values else 0.0
