"""The trained matcher's decision: which cached entry, if any, answers a question, at a target false-hit rate.

The tier retrieves candidates by plain MiniLM cosine; the matcher re-ranks them with its tuned projection,
has the verifier (a cross-encoder, run by the tier) score the closest few, and weighs the best servable entry's
evidence (its logit and tuned cosine against the best rival answer's, and how many entries of its answer agree)
with a logistic. Each stage has its own cut, fitted per target: questions in the same wording, lookups where
several cached entries of one answer agree, and a lone entry's word. The same words always hit; key differences
(`policies.differences`) and the context gate never serve. Pure numpy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from policies.differences import relation
from policies.thresholds import Candidate, ContextGate, CosinePolicy, Decision

NO_RIVAL = -8.0          # the logit a lookup's rival gets when no other answer was verified
EVIDENCE = ("logit", "rival_logit", "support", "tuned_cosine", "rival_tuned_cosine")
STAGES = ("same_wording", "agreed", "lone")


class Choice(NamedTuple):
    index: int | None     # the candidate served, None on a miss
    decision: Decision


class Cuts(NamedTuple):
    """Score cuts of one target, per stage."""
    same_wording: float   # the same content words in the same order ("how do I" / "how can I")
    agreed: float         # two or more cached entries of the answer are accepted by the verifier
    lone: float           # one entry vouches for its answer alone


@dataclass(frozen=True)
class Evidence:
    """What the decision reads about the best servable candidate of one lookup."""
    logit: float          # the verifier's logit for it
    rival_logit: float    # the best logit among candidates with another answer (NO_RIVAL without one)
    support: int          # candidates with its answer that the verifier accepts (logit >= 0)
    tuned_cosine: float
    rival_tuned_cosine: float   # the closest candidate with another answer (0 without one)

    def vector(self) -> np.ndarray:
        return np.array([self.logit, self.rival_logit, math.log1p(self.support), self.tuned_cosine,
                         self.rival_tuned_cosine])


def stage_of(kind: str, support: int) -> str:
    """Which cut a lookup faces, from the relation of its best pair and its answer's support."""
    if kind == "same wording":
        return "same_wording"
    return "agreed" if support >= 2 else "lone"


@dataclass(frozen=True)
class MatcherPolicy:
    projection: np.ndarray               # (d, d): tuned vector = normalise(projection @ plain vector)
    weights: np.ndarray                  # logistic over Evidence.vector()
    bias: float
    thresholds: dict[float, Cuts]        # target false-hit rate -> cuts
    target: float                        # the default target
    min_tuned_cosine: float              # candidates below this are never verified
    verify_k: int = 5                    # at most this many candidates verified per lookup
    min_cosine: float = 0.3              # plain cosine below which the tier does not fetch an entry
    namespaces: dict[str, float] = field(default_factory=dict)           # namespace -> target
    cosine_namespaces: dict[str, float] = field(default_factory=dict)    # namespace -> plain cosine threshold
    gate: ContextGate = field(default_factory=ContextGate)
    unverified_cosine: float = 0.95      # a lone decision without a verifier score (invalidation) needs this

    def tuned(self, vector: np.ndarray) -> np.ndarray:
        v = self.projection @ np.asarray(vector, dtype=np.float32)
        return v / max(float(np.linalg.norm(v)), 1e-12)

    def tuned_cosine(self, c: Candidate) -> float:
        return float(self.tuned(c.query_vector) @ self.tuned(c.entry_vector))

    def shortlist(self, candidates: list[Candidate]) -> list[int]:
        """Indices of the candidates worth verifying, closest first by tuned cosine."""
        scored = [(self.tuned_cosine(c), i) for i, c in enumerate(candidates)]
        kept = sorted(((s, i) for s, i in scored if s >= self.min_tuned_cosine), reverse=True)
        return [i for _, i in kept[: self.verify_k]]

    def cuts_for(self, namespace: str) -> Cuts:
        target = self.namespaces.get(namespace, self.target)
        allowed = [t for t in self.thresholds if t <= target + 1e-12]
        return self.thresholds[max(allowed) if allowed else min(self.thresholds)]

    def score(self, evidence: Evidence) -> float:
        z = self.bias + float(evidence.vector() @ self.weights)
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def judged(self, candidates: list[Candidate]) -> tuple[list[str], list[str]]:
        """Per candidate: its relation kind to the question, and why it may never be served ('' when it may)."""
        kinds, why = [], []
        for c in candidates:
            how = relation(c.query, c.entry_query, c.cosine)
            kinds.append(how.kind)
            why.append("differs in " + ", ".join(how.vetoes) if how.kind == "differs" else self.gate.blocks(c))
        return kinds, why

    def choose(self, candidates: list[Candidate], answers: list[str], namespace: str = "default") -> Choice:
        """The verified candidates of one lookup (each with `verified` set) and their answers' keys."""
        if namespace in self.cosine_namespaces:
            return self._by_cosine(candidates, namespace)
        kinds, why = self.judged(candidates)
        found = best_evidence(candidates, answers, [self.tuned_cosine(c) for c in candidates], [bool(w) for w in why])
        if found is None:
            return Choice(None, Decision(False, 0.0, "; ".join(dict.fromkeys(why)) or "no candidate"))
        best, evidence = found
        if kinds[best] == "same words":
            return Choice(best, Decision(True, 1.0, "the same words"))
        score = self.score(evidence)
        if score >= getattr(self.cuts_for(namespace), stage_of(kinds[best], evidence.support)):
            return Choice(best, Decision(True, score))
        return Choice(None, Decision(False, score, "below the cut"))

    def decide(self, c: Candidate, namespace: str = "default") -> Decision:
        """One candidate on its own (pair mode, invalidation): verified when it carries a verifier score, else by
        a strict plain cosine."""
        if c.verified is None:
            return CosinePolicy(self.unverified_cosine, gate=self.gate).decide(c)
        if c.cosine < self.min_cosine - 0.1 or not self.shortlist([c]):
            return Decision(False, 0.0, "below the retrieval floor")
        return self.choose([c], ["answer"], namespace).decision

    def _by_cosine(self, candidates: list[Candidate], namespace: str) -> Choice:
        rule = CosinePolicy(self.cosine_namespaces[namespace], gate=self.gate)
        decided = [(rule.decide(c), i) for i, c in enumerate(candidates)]
        hits = [(d.score, i, d) for d, i in decided if d.hit]
        if not hits:
            return Choice(None, Decision(False, 0.0, "below the namespace's cosine threshold"))
        _, index, decision = max(hits)
        return Choice(index, decision)

    def with_targets(self, namespaces: dict[str, float]) -> MatcherPolicy:
        return replace(self, namespaces=dict(namespaces))


def best_evidence(candidates: list[Candidate], answers: list[str], tuned: list[float],
                  blocked: list[bool]) -> tuple[int, Evidence] | None:
    """The servable candidate the verifier likes best, and its evidence against the candidates of other answers
    (None when every candidate is blocked)."""
    servable = [i for i in range(len(candidates)) if not blocked[i]]
    if not servable:
        return None
    best = max(servable, key=lambda i: (candidates[i].verified, tuned[i]))
    mine = answers[best]
    rivals = [i for i, a in enumerate(answers) if a != mine]
    support = sum(1 for c, a in zip(candidates, answers) if a == mine and c.verified >= 0)
    return best, Evidence(candidates[best].verified, max((candidates[i].verified for i in rivals), default=NO_RIVAL),
                          support, tuned[best], max((tuned[i] for i in rivals), default=0.0))


def matcher_from_dict(data: dict[str, Any], projection: np.ndarray, namespaces: dict[str, float] | None = None,
                      cosine_namespaces: dict[str, float] | None = None) -> MatcherPolicy:
    """The policy from `matcher.json` (see `cachegate.matcher_train`) and the projection stored beside it."""
    if tuple(data["evidence"]) != EVIDENCE:
        raise ValueError(f"matcher evidence {data['evidence']} does not match this version's {EVIDENCE}")
    d = data["decision"]
    return MatcherPolicy(
        projection=np.asarray(projection, dtype=np.float32), weights=np.asarray(d["weights"], dtype=np.float64),
        bias=float(d["bias"]), thresholds={float(k): Cuts(**v) for k, v in d["thresholds"].items()},
        target=float(d["target_false_hit_rate"]), min_tuned_cosine=float(d["min_tuned_cosine"]),
        verify_k=int(d["verify_k"]), min_cosine=min([float(d["min_cosine"]), *(cosine_namespaces or {}).values()]),
        namespaces=dict(namespaces or {}), cosine_namespaces=dict(cosine_namespaces or {}),
        gate=ContextGate(**data.get("context_gate", {})))
