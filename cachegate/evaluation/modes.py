"""The evaluator's modes over labeled data: pair mode asks the policy about each labeled row; cache mode stores
every question1 and looks every question2 up through the real tier; paraphrase mode weighs easy matches against
unrelated and hard pairs; multi-turn mode checks follow-ups never cross conversations (intent mode:
`cachegate.evaluation.intents`)."""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from cachegate.cache.semantic import datasets
from cachegate.cache.semantic.context import context_text
from cachegate.cache.semantic.tier import SemanticTier
from cachegate.evaluation.lookups import served, store
from policies import calibration
from policies.thresholds import Candidate

COSINE_THRESHOLDS = (0.80, 0.85, 0.90, 0.95)
CROSS_ALL_UP_TO = 200       # conversations; past this, each follow-up is tried in its nearest + random others
CROSS_NEAREST, CROSS_RANDOM = 20, 10


def decisions(policy, pairs: list[datasets.Pair], vectors: dict[str, np.ndarray], verifier=None) -> np.ndarray:
    """The policy's verdict on each pair on its own (question2 asked, question1 cached), verified when the policy
    is the matcher."""
    logits = verifier.logits([(p.b, p.a) for p in pairs]) if verifier is not None and pairs else [None] * len(pairs)
    return np.array([policy.decide(Candidate(p.b, p.a, float(np.dot(vectors[p.a], vectors[p.b])),
                                             query_vector=vectors[p.b], entry_vector=vectors[p.a],
                                             verified=None if z is None else float(z))).hit
                     for p, z in zip(pairs, logits)], dtype=bool)


def pair_mode(policy, pairs: list[datasets.Pair], vectors: dict[str, np.ndarray], verifier=None) -> dict:
    labels = np.array([p.duplicate for p in pairs])
    cosines = np.array([float(np.dot(vectors[p.a], vectors[p.b])) for p in pairs])
    hits = decisions(policy, pairs, vectors, verifier)
    mine = calibration.rates(hits, labels)
    at_same, threshold = calibration.hit_rate_at(cosines, labels, mine.false_hit_rate)
    return {"rows": len(pairs), "duplicates": int(labels.sum()), **mine.as_dict(),
            "cosine_hit_rate_at_same_false_hit_rate": round(at_same, 4),
            "cosine_threshold_at_same_false_hit_rate": round(threshold, 4),
            "cosine": {f"{t:.2f}": calibration.rates(cosines >= t, labels).as_dict() for t in COSINE_THRESHOLDS}}


# -- paraphrase mode ------------------------------------------------------------------------------
def paraphrase_mode(policy, pairs: list[datasets.Pair], hard: list[datasets.Pair],
                    vectors: dict[str, np.ndarray], verifier=None) -> dict:
    """Hit rate on the paraphrases; false hits on unrelated pairs and on hard (labeled) non-duplicates."""
    def hits(rows: list[datasets.Pair]) -> np.ndarray:
        return decisions(policy, rows, vectors, verifier)
    positives = [p for p in pairs if p.duplicate]
    found, unrelated, wrong = hits(positives), hits([p for p in pairs if not p.duplicate]), hits(hard)
    false = int(unrelated.sum() + wrong.sum())
    return {"paraphrases": len(positives), "hit_rate": round(float(found.mean()), 4),
            "unrelated_pairs": len(unrelated), "unrelated_false_hits": int(unrelated.sum()),
            "hard_negatives": len(hard), "hard_false_hits": int(wrong.sum()),
            "false_hit_rate": round(false / max(1, false + int(found.sum())), 4)}


# -- cache mode -----------------------------------------------------------------------------------
async def cache_mode(tier: SemanticTier, pairs: list[datasets.Pair]) -> dict:
    for q in dict.fromkeys(p.a for p in pairs):
        await store(tier, q, q)                      # the answer names its question
    partner = nondup = other = 0
    for p in pairs:
        got = await served(tier, p.b)
        if got is None:
            continue
        if got == p.a:
            partner += p.duplicate
            nondup += not p.duplicate
        else:
            other += 1
    duplicates = sum(p.duplicate for p in pairs)
    hits = partner + nondup + other
    return {"entries": len(tier.catalog), "lookups": len(pairs), "hits": hits,
            "hit_rate": round(partner / max(1, duplicates), 4), "partner_hits": partner,
            "labeled_non_duplicate_hits": nondup, "other_entry_hits": other,
            "false_hit_rate_labeled": round(nondup / max(1, partner + nondup), 4)}


# -- multi-turn mode ------------------------------------------------------------------------------
@dataclass
class Tally:
    lookups: int = 0
    hits: int = 0
    wrong: int = 0


async def multiturn_mode(tier: SemanticTier, conversations: list[datasets.Conversation]) -> dict:
    for i, c in enumerate(conversations):
        await store(tier, c.question, f"opening {i}")
        await store(tier, c.follow_up, f"follow-up {i}", (c.question, c.answer))
    opening = [c.question.lower() for c in conversations]
    same, cross, bare = Tally(), Tally(), Tally()
    for i, c in enumerate(conversations):
        _count(same, await served(tier, c.follow_up, (c.question, c.answer)), opening, opening[i])
        _count(bare, await served(tier, c.follow_up), opening, None)
        for j in others(tier, conversations, i):
            cj = conversations[j]
            _count(cross, await served(tier, c.follow_up, (cj.question, cj.answer)), opening, opening[j])
    return {"conversations": len(conversations),
            "follow_ups_from_other_conversation": cross.wrong + bare.wrong,
            "same_conversation": {"lookups": same.lookups, "hits": same.hits,
                                  "hit_rate": round(same.hits / max(1, same.lookups), 4), "wrong": same.wrong},
            "other_conversation": {"lookups": cross.lookups, "hits": cross.hits, "wrong": cross.wrong},
            "without_context": {"lookups": bare.lookups, "hits": bare.hits, "wrong": bare.wrong}}


def _count(tally: Tally, answer: str | None, opening: list[str], asked_in: str | None) -> None:
    """A follow-up answer served from a conversation other than the one it was asked in is wrong."""
    tally.lookups += 1
    if answer is None:
        return
    tally.hits += 1
    kind, index = answer.split(" ")
    if kind == "follow-up" and opening[int(index)] != asked_in:
        tally.wrong += 1


def others(tier: SemanticTier, conversations: list[datasets.Conversation], i: int) -> list[int]:
    """Every other conversation (with a different opening), or past a size the closest and some random."""
    n = len(conversations)
    different = [j for j in range(n) if conversations[j].question.lower() != conversations[i].question.lower()]
    if n <= CROSS_ALL_UP_TO:
        return different
    ctx = tier.embedder.cache
    mine = ctx[context_of(conversations[i])]
    near = sorted(different, key=lambda j: -float(np.dot(mine, ctx[context_of(conversations[j])])))
    rest = near[CROSS_NEAREST:]
    return near[:CROSS_NEAREST] + random.Random(i).sample(rest, min(CROSS_RANDOM, len(rest)))


def conversation_contexts(conversations: list[datasets.Conversation]) -> list[str]:
    return [context_of(c) for c in conversations]


def context_of(c: datasets.Conversation) -> str:
    return context_text([{"role": "user", "content": c.question}, {"role": "assistant", "content": c.answer}],
                        turns=1, max_chars=1500)
