"""Lookups replayed offline exactly as the tier makes them (plain top-k, the matcher's shortlist, one verifier
score per shortlisted pair, `policies.matcher.best_evidence`), giving the evidence the decision is fitted on."""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from cachegate.semantic import datasets
from policies.matcher import EVIDENCE, MatcherPolicy, best_evidence, stage_of
from policies.thresholds import Candidate

NOTHING = None   # the answer of an out-of-scope lookup: no cached answer is right


@dataclass(frozen=True)
class Lookups:
    """One calibration set: per lookup, the evidence of its best candidate and whether serving it is right."""
    name: str
    evidence: np.ndarray    # (lookups, len(EVIDENCE)); rows of lookups without a servable candidate are 0
    right: np.ndarray       # serving the best candidate is right
    possible: np.ndarray    # a servable candidate was verified (otherwise the lookup is a miss)
    groups: np.ndarray      # folds never split a group
    relevant: np.ndarray    # the lookup has a right answer in the cache (the hit rate's denominator)
    stage: np.ndarray       # which cut the lookup faces (`policies.matcher.stage_of`), or "same words"

    def __len__(self) -> int:
        return len(self.right)


@dataclass(frozen=True)
class Shortlist:
    query: str
    candidates: list[Candidate]
    answers: list[str]
    right_answer: str | None


def warm(rows: list[tuple[str, str]], per_intent: int, seed: int) -> tuple[list[tuple[str, str]], set[str]]:
    """K rows per intent to cache, and the texts chosen."""
    by: dict[str, list[str]] = {}
    for text, intent in rows:
        by.setdefault(intent, []).append(text)
    rng = random.Random(seed)
    chosen = [(t, i) for i in sorted(by) for t in rng.sample(by[i], min(per_intent, len(by[i])))]
    return chosen, {t for t, _ in chosen}


def shortlists(policy: MatcherPolicy, cache: list[tuple[str, str]], asked: list[tuple[str, str | None]],
               vectors: dict[str, np.ndarray], top_k: int) -> list[Shortlist]:
    """What the tier would verify for each question asked against a cache of (question, answer) entries."""
    e = np.stack([vectors[t] for t, _ in cache])
    out = []
    for start in range(0, len(asked), 1024):
        block = asked[start: start + 1024]
        sims = np.stack([vectors[t] for t, _ in block]) @ e.T
        top = np.argsort(-sims, axis=1)[:, :top_k]
        for (text, answer), row, cols in zip(block, sims, top):
            cols = [c for c in cols if row[c] >= policy.min_cosine - 0.1 and cache[c][0] != text]
            found = [Candidate(text, cache[c][0], float(row[c]), query_vector=vectors[text],
                               entry_vector=vectors[cache[c][0]]) for c in cols]
            keep = policy.shortlist(found)
            out.append(Shortlist(text, [found[i] for i in keep], [cache[cols[i]][1] for i in keep], answer))
    return out


def verify_all(lists: list[Shortlist], logits_of) -> list[Shortlist]:
    """Every shortlisted pair scored (`Verifier.logits`); candidates get `verified`."""
    from dataclasses import replace
    pairs = [(s.query, c.entry_query) for s in lists for c in s.candidates]
    scores = logits_of(pairs) if pairs else np.zeros(0, dtype=np.float32)
    out, k = [], 0
    for s in lists:
        out.append(Shortlist(s.query, [replace(c, verified=float(scores[k + j])) for j, c in enumerate(s.candidates)],
                             s.answers, s.right_answer))
        k += len(s.candidates)
    return out


def evidence(name: str, policy: MatcherPolicy, lists: list[Shortlist], groups: list) -> Lookups:
    rows, right, possible, stages = [], [], [], []
    for s in lists:
        kinds, why = policy.judged(s.candidates)
        found = best_evidence(s.candidates, s.answers, [policy.tuned_cosine(c) for c in s.candidates],
                              [bool(w) for w in why]) if s.candidates else None
        possible.append(found is not None)
        rows.append(found[1].vector() if found else np.zeros(len(EVIDENCE)))
        right.append(found is not None and s.right_answer is not None and s.answers[found[0]] == s.right_answer)
        kind = kinds[found[0]] if found else "other"
        stages.append("same words" if kind == "same words" else stage_of(kind, found[1].support if found else 0))
    return Lookups(name, np.array(rows), np.array(right), np.array(possible), np.array(groups),
                   np.array([s.right_answer is not None for s in lists]), np.array(stages))


def intent_case(name: str, policy: MatcherPolicy, own: list[tuple[str, str]], others: list[tuple[str, str]],
                outside: list[str], vectors: dict[str, np.ndarray], logits_of, group_of, per_intent: int,
                top_k: int, seed: int, ask: list[tuple[str, str]] | None = None) -> Lookups:
    """A cache of K questions per intent of `own` and of `others` (distractors); `ask` (by default every other
    question of `own`) and every out-of-scope question looked up."""
    cache_own, taken = warm(own, per_intent, seed)
    cache_others, _ = warm(others, per_intent, seed)
    inside = ask if ask is not None else [(t, i) for t, i in own if t not in taken]
    asked: list[tuple[str, str | None]] = inside + [(t, NOTHING) for t in outside]
    lists = verify_all(shortlists(policy, cache_own + cache_others, asked, vectors, top_k), logits_of)
    return evidence(name, policy, lists, [group_of(t, i) for t, i in asked])


def split(s: Lookups, rows: np.ndarray, name: str) -> Lookups:
    return Lookups(name, s.evidence[rows], s.right[rows], s.possible[rows], s.groups[rows], s.relevant[rows],
                   s.stage[rows])


def pair_case(name: str, policy: MatcherPolicy, pairs: list[datasets.Pair], vectors: dict[str, np.ndarray],
              logits_of, groups: np.ndarray) -> Lookups:
    """Each pair on its own: question2 looked up against question1 alone (pair mode)."""
    lists = []
    for k, p in enumerate(pairs):
        c = Candidate(p.b, p.a, float(vectors[p.a] @ vectors[p.b]), query_vector=vectors[p.b], entry_vector=vectors[p.a])
        keep = policy.shortlist([c]) if c.cosine >= policy.min_cosine - 0.1 else []
        lists.append(Shortlist(p.b, [c] if keep else [], [f"q{k}"] if keep else [], f"q{k}" if p.duplicate else None))
    lists = verify_all(lists, logits_of)
    out = evidence(name, policy, lists, list(groups))
    return Lookups(out.name, out.evidence, out.right, out.possible, out.groups, np.array([p.duplicate for p in pairs]),
                   out.stage)
