"""Lookups replayed offline exactly as the tier makes them (plain top-k, the matcher's tuned cosines, vetoes and
gate, `MatcherPolicy.evidence`), giving the evidence a cut is fitted on."""
from __future__ import annotations

import random
from dataclasses import dataclass, replace

import numpy as np

from cachegate.cache.semantic import datasets
from policies.matcher import Cut, Evidence, MatcherPolicy
from policies.thresholds import Candidate

NOTHING = None   # the answer of an out-of-scope lookup: no cached answer is right
FIELDS = ("tuned", "margin", "rivalled", "always", "wording", "right", "relevant")


@dataclass(frozen=True)
class Lookups:
    """Per lookup: the evidence of its best servable candidate and whether serving that candidate is right."""
    name: str
    tuned: np.ndarray       # the best servable candidate's tuned cosine (-1 when there is none)
    margin: np.ndarray      # its tuned cosine minus the closest candidate of another answer's
    rivalled: np.ndarray    # a candidate of another answer was retrieved (else the lone cut decides)
    always: np.ndarray      # the same words: served whatever the cut
    wording: np.ndarray     # the same wording: served at the cut's cosine, whatever the margin
    right: np.ndarray       # serving the best candidate is right
    relevant: np.ndarray    # the cache holds a right answer (the hit rate's denominator)
    query: list[str]        # the question and the cached question the decision would serve
    entry: list[str]
    logit: np.ndarray | None = None    # the verifier's logit on (query, entry), once scored (`scored`)

    def __len__(self) -> int:
        return len(self.right)

    def passes(self, cut: Cut) -> np.ndarray:
        """What the cut's cosine and margin (or lone cosine) let through, before the verifier."""
        above = self.tuned >= cut.cosine
        rivalled = self.rivalled & above & (self.margin >= cut.margin)
        return (self.wording & above) | rivalled | (~self.rivalled & (self.tuned >= cut.lone))

    def verified(self, logit: float | None) -> np.ndarray:
        """The lookups whose logit reaches the verifier's floor (all of them without a floor)."""
        if logit is None:
            return np.ones(len(self), bool)
        assert self.logit is not None, f"{self.name}: a verifier-gated cut needs scored lookups"
        return self.logit >= logit

    def served(self, cut: Cut) -> np.ndarray:
        """As `MatcherPolicy.choose` decides: the same words always; else the cut, then the verifier's floor."""
        return self.always | (self.passes(cut) & self.verified(cut.logit))

    def part(self, rows: np.ndarray, name: str) -> Lookups:
        pick = np.flatnonzero(rows)
        return Lookups(name, *(getattr(self, f)[rows] for f in FIELDS), [self.query[k] for k in pick],
                       [self.entry[k] for k in pick], None if self.logit is None else self.logit[rows])


def pooled(name: str, parts: list[Lookups]) -> Lookups:
    logits = None if any(p.logit is None for p in parts) else np.concatenate([p.logit for p in parts])
    return Lookups(name, *(np.concatenate([getattr(p, f) for p in parts]) for f in FIELDS),
                   [q for p in parts for q in p.query], [e for p in parts for e in p.entry], logits)


def scored(lookups: Lookups, logits_of) -> Lookups:
    """The lookups with the verifier's logit on each one's best servable candidate (what the tier would verify)."""
    logits = np.asarray(logits_of(list(zip(lookups.query, lookups.entry))), dtype=np.float32) if len(lookups) \
        else np.zeros(0, np.float32)
    return replace(lookups, logit=logits)


def answers_taken_out(cache: list[tuple[str, str]], asked: list[tuple[str, str | None]]):
    """Per intent of the in-scope questions asked: the cache without that intent's entries, and those questions as
    out-of-scope lookups (no answer cached is right for them)."""
    by_intent: dict[str, list[tuple[str, None]]] = {}
    for text, intent in asked:
        if intent is not NOTHING:
            by_intent.setdefault(intent, []).append((text, NOTHING))
    for intent, questions in by_intent.items():
        yield [(t, a) for t, a in cache if a != intent], questions


def warm(rows: list[tuple[str, str]], per_intent: int, seed: int) -> list[tuple[str, str]]:
    """K rows per intent to cache."""
    by: dict[str, list[str]] = {}
    for text, intent in rows:
        by.setdefault(intent, []).append(text)
    rng = random.Random(seed)
    return [(t, i) for i in sorted(by) for t in rng.sample(by[i], min(per_intent, len(by[i])))]


@dataclass(frozen=True)
class Lookup:
    """One lookup as the tier makes it: the question, its right answer, the candidates fetched, their answers and
    tuned cosines, and the policy's evidence over them (None when every candidate is vetoed) and its kind."""
    text: str
    answer: str | None
    found: list[Candidate]
    answers: list[str]
    tuned: np.ndarray
    plain: np.ndarray
    evidence: Evidence | None
    kind: str


def looked_up(policy: MatcherPolicy, cache: list[tuple[str, str]], asked: list[tuple[str, str | None]],
              vectors: dict[str, np.ndarray], top_k: int, carried: dict[str, np.ndarray] | None = None):
    """Each question asked against a cache of (question, answer) entries: the candidates the tier would fetch (the
    plain top-k above the retrieval floor, never the question itself) and the policy's own `evidence` over them.
    `carried`: the vectors the candidates hold for the policy's projection instead of the plain ones (another
    head's output, with an identity projection: `loadtests.matcher_heads`)."""
    carried = vectors if carried is None else carried
    plain = np.stack([vectors[t] for t, _ in cache])
    for start in range(0, len(asked), 1024):
        block = asked[start: start + 1024]
        sims = np.stack([vectors[t] for t, _ in block]) @ plain.T
        top = np.argsort(-sims, axis=1)[:, :top_k + 1]
        for (text, answer), row, cols in zip(block, sims, top):
            cols = [c for c in cols if row[c] >= policy.min_cosine - 0.1 and cache[c][0] != text][:top_k]
            found = [Candidate(text, cache[c][0], float(row[c]), query_vector=carried[text],
                               entry_vector=carried[cache[c][0]], entry_answer=cache[c][1]) for c in cols]
            answers = [cache[c][1] for c in cols]
            tuned = policy.tuned_cosines(found)
            evidence, kind, _ = policy.evidence(found, answers, tuned)
            yield Lookup(text, answer, found, answers, tuned, row[cols], evidence, kind)


def replay(name: str, policy: MatcherPolicy, cache: list[tuple[str, str]], asked: list[tuple[str, str | None]],
           vectors: dict[str, np.ndarray], top_k: int, carried: dict[str, np.ndarray] | None = None) -> Lookups:
    """Each question asked against a cache of (question, answer) entries, decided by the policy's own
    `evidence` over the candidates the tier would fetch (`looked_up`)."""
    rows: dict[str, list] = {k: [] for k in FIELDS + ("query", "entry")}
    for one in looked_up(policy, cache, asked, vectors, top_k, carried):
        evidence = one.evidence
        entry = (one.found[evidence.index].entry_query, one.answers[evidence.index]) if evidence is not None \
            else ("", NOTHING)
        rows["tuned"].append(evidence.tuned_cosine if evidence is not None else -1.0)
        rows["margin"].append(evidence.margin if evidence is not None else -2.0)
        rows["rivalled"].append(evidence is not None and evidence.rival is not None)
        rows["always"].append(one.kind == "same words")
        rows["wording"].append(one.kind == "same wording")
        rows["right"].append(one.answer is not NOTHING and entry[1] == one.answer)
        rows["relevant"].append(one.answer is not NOTHING)
        rows["query"].append(one.text)
        rows["entry"].append(entry[0])
    return Lookups(name, *(np.array(rows[k]) for k in FIELDS), rows["query"], rows["entry"])


def pairs(name: str, policy: MatcherPolicy, held: list[datasets.Pair], vectors: dict[str, np.ndarray],
          carried: dict[str, np.ndarray] | None = None) -> Lookups:
    """Pair mode: question b looked up against question a alone (no rival: the margin is the tuned cosine)."""
    out = pooled(name, [replay(name, policy, [(p.a, f"q{k}")], [(p.b, f"q{k}" if p.duplicate else NOTHING)],
                               vectors, 1, carried) for k, p in enumerate(held)] or [EMPTY])
    return Lookups(name, out.tuned, out.margin, out.rivalled, out.always, out.wording, out.right,
                   np.array([p.duplicate for p in held], bool), out.query, out.entry)


EMPTY = Lookups("", *(np.zeros(0) for _ in range(2)), *(np.zeros(0, bool) for _ in range(5)), [], [])


def pair_cache(name: str, policy: MatcherPolicy, held: list[datasets.Pair], vectors: dict[str, np.ndarray],
               top_k: int, carried: dict[str, np.ndarray] | None = None) -> Lookups:
    """Cache mode over pairs: every first question cached (its pair's answer), every second one looked up; right
    only when a duplicate finds its own partner."""
    cache = [(p.a, f"q{k}") for k, p in enumerate(held)]
    asked = [(p.b, f"q{k}" if p.duplicate else NOTHING) for k, p in enumerate(held)]
    return replay(name, policy, cache, asked, vectors, top_k, carried) if held else EMPTY
