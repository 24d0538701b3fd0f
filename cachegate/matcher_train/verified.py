"""Adapting the matcher to a deployment with its verified labels (`verify.labels_path`): what shadow checks and
client feedback said about hits it served, and the curated library's example questions (one answer serves them
all).

A right hit becomes a positive pair for the projection, a wrong one a hard negative (the question must end up
nearer its own wording than the entry it was wrongly given), each repeated so a few hundred labels weigh against
the corpus. The cut is then tightened, never loosened, to the lowest cosine at which the labelled hits it still
serves are wrong no more often than the target: labels only exist for hits, so they can show a cut too loose but
never one too strict.
"""
from __future__ import annotations

import random

import numpy as np

from cachegate.matcher_train.pairs import Triplet
from cachegate.verified.labels import Label, read_labels
from policies.matcher import Cut

REPEAT = 4           # each label's weight against the corpus rows
MIN_LABELS = 20      # labelled hits above a cut before they may tighten it


def load(path: str) -> list[Label]:
    labels = [label for label in read_labels(path) if label.question.strip() and label.entry_question.strip()]
    if not labels:
        raise SystemExit(f"{path}: no verified labels (JSON lines with question, entry_question, good)")
    return labels


def from_curated(path: str) -> list[Label]:
    """A curated library's example questions as right pairs: each example with the next of the same answer (the
    operators vouched that one answer serves them all)."""
    from cachegate.cache.curated.records import read_file
    out = []
    for answer in read_file(path):
        questions = [q.strip() for q in answer.questions if q.strip()]
        out += [Label(answer.tenant or "default", answer.namespace or "default", a, b, True, "curated")
                for a, b in zip(questions, questions[1:])]
    if not out:
        raise SystemExit(f"{path}: no answer with two example questions")
    return out


def texts(labels: list[Label]) -> list[str]:
    return sorted({t for label in labels for t in (label.question, label.entry_question)})


def triplets(labels: list[Label], seed: int) -> list[Triplet]:
    rng = random.Random(seed)
    wrong_for: dict[str, list[str]] = {}
    for label in labels:
        if not label.good:
            wrong_for.setdefault(label.question, []).append(label.entry_question)
    others = texts(labels)
    out = []
    for k, label in enumerate(labels):
        if label.good:
            negative = rng.choice(wrong_for.get(label.question) or others)
            row = Triplet(label.question, label.entry_question, negative, f"verified:{k}")
        else:
            row = Triplet(label.question, label.question, label.entry_question, f"verified:{k}")
        out += [row] * REPEAT
    return out


def tightened(cut: Cut, labels: list[Label], tuned_cosine, target: float) -> Cut:
    """`cut` with its cosine raised until the labelled hits it would still serve are within target."""
    cosines = np.array([tuned_cosine(label.question, label.entry_question) for label in labels])
    wrong = np.array([not label.good for label in labels])
    for cosine in sorted({cut.cosine, *np.round(cosines[cosines > cut.cosine] + 1e-6, 4)}):
        kept = cosines >= cosine
        if kept.sum() < MIN_LABELS or wrong[kept].mean() <= target:
            return cut._replace(cosine=float(cosine), lone=max(cut.lone, float(cosine)))
    return cut._replace(cosine=1.01, lone=1.01)


def figures(cut: Cut, labels: list[Label], tuned_cosine) -> dict:
    """The labelled hits the cut's cosine still serves (the margin needs the rivals, which labels do not keep)."""
    served = [label for label in labels if tuned_cosine(label.question, label.entry_question) >= cut.cosine]
    wrong = sum(1 for label in served if not label.good)
    return {"lookups": len(labels), "served": len(served), "wrong": wrong,
            "served_rate": round(len(served) / len(labels), 4),
            "hit_rate": round((len(served) - wrong) / max(1, sum(label.good for label in labels)), 4),
            "false_hit_rate": round(wrong / len(served), 4) if served else 0.0}
