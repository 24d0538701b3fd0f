"""Training examples mined from the corpus: triplets for the projection, labelled pairs for the verifier.

Hard negatives are the nearest questions of another intent (by the vectors given), questions of the same domain
with another intent, and Quora's labelled non-duplicates; positives are other questions of the same intent and
Quora's duplicates.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

from cachegate.cache.semantic import datasets


@dataclass(frozen=True)
class Triplet:
    anchor: str
    positive: str
    negative: str
    group: str       # rows of one group never share a batch (their in-batch negatives would be positives)


@dataclass(frozen=True)
class Labelled:
    a: str
    b: str
    label: float


def by_intent(rows: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for text, intent in rows:
        out.setdefault(intent, []).append(text)
    return out


def nearest_others(rows: list[tuple[str, str]], vectors: dict[str, np.ndarray], n: int) -> list[list[str]]:
    """For each row, its `n` nearest questions of another intent."""
    m = np.stack([vectors[t] for t, _ in rows])
    labels = np.array([i for _, i in rows])
    out: list[list[str]] = []
    for start in range(0, len(rows), 1024):
        sims = m[start: start + 1024] @ m.T
        sims[labels[start: start + 1024, None] == labels[None, :]] = -2.0
        top = np.argpartition(-sims, n, axis=1)[:, :n] if len(rows) > n else np.argsort(-sims, 1)
        for r, cols in enumerate(top):
            cols = cols[np.argsort(-sims[r, cols])]
            out.append([rows[c][0] for c in cols if sims[r, c] > -2.0][:n])
    return out


def other_question(rng: random.Random, texts: list[str], not_this: str) -> str:
    pick = rng.choice(texts)
    return pick if pick != not_this or len(texts) == 1 else texts[(texts.index(pick) + 1) % len(texts)]


def triplets(rows: list[tuple[str, str]], qqp: list[datasets.Pair], vectors: dict[str, np.ndarray],
             seed: int) -> list[Triplet]:
    rng = random.Random(seed)
    intents = by_intent(rows)
    near = nearest_others(rows, vectors, 3)
    out = [Triplet(t, other_question(rng, intents[i], t), rng.choice(near[r] or [t]), i)
           for r, (t, i) in enumerate(rows) if len(intents[i]) > 1 and near[r]]
    non_dup: dict[str, list[str]] = {}
    for p in qqp:
        if not p.duplicate:
            non_dup.setdefault(p.a, []).append(p.b)
            non_dup.setdefault(p.b, []).append(p.a)
    questions = sorted({t for p in qqp for t in (p.a, p.b)})
    for k, p in enumerate(p for p in qqp if p.duplicate):
        negative = rng.choice(non_dup.get(p.a) or non_dup.get(p.b) or [other_question(rng, questions, p.b)])
        out.append(Triplet(p.a, p.b, negative, f"qqp:{k}"))
    rng.shuffle(out)
    return out


def verifier_pairs(rows: list[tuple[str, str]], qqp: list[datasets.Pair], vectors: dict[str, np.ndarray],
                   domain_of: dict[str, str], seed: int, hard: int = 2) -> list[Labelled]:
    """Per question: a paraphrase, its `hard` nearest other-intent questions, one same-domain other intent; then
    every Quora pair. Each pair in a random order (the verifier should not care which side is cached)."""
    rng = random.Random(seed)
    intents = by_intent(rows)
    siblings: dict[str, list[str]] = {}
    for intent in intents:
        siblings.setdefault(domain_of[intent], []).append(intent)
    near = nearest_others(rows, vectors, hard)
    out: list[Labelled] = []
    for r, (t, i) in enumerate(rows):
        if len(intents[i]) > 1:
            out.append(Labelled(t, other_question(rng, intents[i], t), 1.0))
        out += [Labelled(t, n, 0.0) for n in near[r]]
        others = [j for j in siblings[domain_of[i]] if j != i]
        if others:
            out.append(Labelled(t, rng.choice(intents[rng.choice(others)]), 0.0))
    out += [Labelled(p.b, p.a, float(p.duplicate)) for p in qqp]
    rng.shuffle(out)
    return [x if rng.random() < 0.5 else Labelled(x.b, x.a, x.label) for x in out]


class DistinctGroupBatches:
    """Batches in which no two rows share a group (an intent), for sentence-transformers' trainer: MNRL's in-batch
    negatives are then true negatives. Greedy fill in a seeded shuffled order, reshuffled every epoch."""

    def __init__(self, groups: list[str], batch_size: int, seed: int) -> None:
        self.groups, self.batch_size, self.seed, self.epoch = groups, batch_size, seed, 0

    def __call__(self, dataset, batch_size: int, **_) -> DistinctGroupBatches:
        assert len(dataset) == len(self.groups), "one group per row"
        self.batch_size = batch_size
        return self

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def batches(self) -> list[list[int]]:
        order = list(range(len(self.groups)))
        random.Random(self.seed + self.epoch).shuffle(order)
        open_batches: list[tuple[list[int], set[str]]] = []
        done: list[list[int]] = []
        for row in order:
            target = next((b for b in open_batches if self.groups[row] not in b[1]), None)
            if target is None:
                target = ([], set())
                open_batches.append(target)
            target[0].append(row)
            target[1].add(self.groups[row])
            if len(target[0]) == self.batch_size:
                done.append(target[0])
                open_batches.remove(target)
        return done + [b for b, _ in open_batches]

    def __iter__(self):
        return iter(self.batches())

    def __len__(self) -> int:
        return math.ceil(len(self.groups) / self.batch_size)
