"""Similarity decisions: is a cached entry close enough to serve for this question, in this namespace?

Two policies behind one interface: a plain cosine threshold, and a calibrated evaluator (vetoes from
`policies.differences`, then logistic over `policies.signals`) whose thresholds were fitted for a target
false-hit rate. Both gate on context.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, NamedTuple, Protocol

import numpy as np

from policies.differences import relation
from policies.signals import FEATURES, pair_features


@dataclass(frozen=True)
class Candidate:
    """A lookup question against one cached entry, with the similarities the index measured."""
    query: str
    entry_query: str
    cosine: float
    context_cosine: float | None = None   # None when neither side carries earlier turns
    context_mismatch: bool = False        # one side carries earlier turns and the other does not
    query_vector: Any = None              # the two questions' embeddings, for policies that read them
    entry_vector: Any = None
    verified: float | None = None         # the verifier's logit for the pair, when the matcher ran it
    entry_answer: str | None = None       # the entry's answer as stored (two entries holding the same text were
                                          # given one answer); None where the caller does not say


@dataclass(frozen=True)
class Decision:
    hit: bool
    score: float      # the policy's confidence that the entry answers the question
    reason: str = ""


@dataclass(frozen=True)
class ContextGate:
    """Follow-ups are only served within a conversation whose earlier turns match this closely."""
    min_similarity: float = 0.9

    def blocks(self, c: Candidate) -> str:
        if c.context_mismatch:
            return "context present on one side only"
        if c.context_cosine is not None and c.context_cosine < self.min_similarity:
            return f"context similarity {c.context_cosine:.3f} < {self.min_similarity:.3f}"
        return ""


class ThresholdPolicy(Protocol):
    min_cosine: float   # below this cosine nothing is ever a hit: the tier need not fetch the entry
    knob: str           # what a namespace's setting is: "threshold" or "target_false_hit_rate"
    judges_together: bool   # decides over a lookup's candidates at once (`choose`), not one at a time (`decide`)

    @property
    def fetch_floor(self) -> float: ...

    def invalidation_floor(self, min_similarity: float | None = None) -> float: ...

    def decide(self, c: Candidate, namespace: str = "default") -> Decision: ...

    def with_threshold(self, namespace: str, value: float) -> ThresholdPolicy: ...

    def view(self) -> dict[str, Any]: ...


class PolicyBase:
    """What every policy owns besides its decision: the floors under which the tier does not even fetch an entry
    (the index scores a question together with its context, so a hit's index score may sit a little under the
    question's cosine: the slack), and the one setting a namespace tunes (`knob`, in `namespaces`)."""
    prefilter_slack: ClassVar[float] = 0.1       # lookups: fetch entries whose index score is this close to the floor
    invalidation_slack: ClassVar[float] = 0.15   # invalidation by question: wider, it must not miss one
    knob: ClassVar[str] = "target_false_hit_rate"
    judges_together: ClassVar[bool] = False      # True: decides over all of a lookup's candidates at once (rivals)

    @property
    def fetch_floor(self) -> float:
        """Index scores under this are never a hit for any namespace: the tier skips those entries."""
        return self.min_cosine - self.prefilter_slack

    def invalidation_floor(self, min_similarity: float | None = None) -> float:
        """Index scores under this are not even compared when invalidating entries similar to a question."""
        return (min_similarity or self.min_cosine) - self.invalidation_slack

    def with_threshold(self, namespace: str, value: float):
        """This policy with `namespace` set to `value` (of `knob`: a cosine threshold or a target false-hit rate)."""
        return replace(self, namespaces={**self.namespaces, namespace: value})

    def view(self) -> dict[str, Any]:
        return {"kind": "calibrated", "target_false_hit_rate": self.target, "namespaces": dict(self.namespaces)}


@dataclass(frozen=True)
class CosinePolicy(PolicyBase):
    threshold: float = 0.9
    namespaces: dict[str, float] = field(default_factory=dict)   # namespace -> threshold
    gate: ContextGate = ContextGate()
    knob: ClassVar[str] = "threshold"

    @property
    def min_cosine(self) -> float:
        return min([self.threshold, *self.namespaces.values()])

    def view(self) -> dict[str, Any]:
        return {"kind": "cosine", "threshold": self.threshold, "namespaces": dict(self.namespaces)}

    def decide(self, c: Candidate, namespace: str = "default") -> Decision:
        """Cosine against the namespace's threshold; a key difference (numbers, names, negation...) vetoes."""
        blocked = self.gate.blocks(c)
        threshold = self.namespaces.get(namespace, self.threshold)
        if c.cosine < threshold:
            return Decision(False, c.cosine, blocked)
        how = relation(c.query, c.entry_query, c.cosine)
        if how.kind == "differs":
            return Decision(False, c.cosine, "differs in " + ", ".join(how.vetoes))
        return Decision(not blocked, c.cosine, blocked)


class Cut(NamedTuple):
    """Score thresholds for one target rate: pairs that differ only in function words need less."""
    same_wording: float
    other: float


@dataclass(frozen=True)
class CalibratedPolicy(PolicyBase):
    """Key differences (numbers, names, negation, opposites, swapped roles) never hit; the same words always
    do; otherwise sigmoid(w · standardised features + b) against the cut fitted for the namespace's target."""
    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    thresholds: dict[float, Cut]            # target false-hit rate -> score thresholds
    target: float                           # the default target
    min_cosine: float = 0.5
    namespaces: dict[str, float] = field(default_factory=dict)   # namespace -> target false-hit rate
    gate: ContextGate = ContextGate()
    embedding_dim: int = 0       # > 0: the features include |a - b| and a * b of the embeddings
    cosine_namespaces: dict[str, float] = field(default_factory=dict)   # namespace -> plain cosine threshold

    def score(self, c: Candidate) -> float:
        x = pair_features(c.query, c.entry_query, c.cosine, c.query_vector, c.entry_vector, self.embedding_dim)
        return self.score_features(x)

    def score_features(self, x: np.ndarray) -> float:
        z = self.bias + float(((x - self.mean) / self.scale) @ self.weights)
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def cut_for(self, namespace: str) -> Cut:
        target = self.namespaces.get(namespace, self.target)
        allowed = [t for t in self.thresholds if t <= target + 1e-12]
        return self.thresholds[max(allowed) if allowed else min(self.thresholds)]

    def decide(self, c: Candidate, namespace: str = "default") -> Decision:
        if namespace in self.cosine_namespaces:
            return CosinePolicy(self.cosine_namespaces[namespace], gate=self.gate).decide(c)
        if c.cosine < self.min_cosine:
            return Decision(False, 0.0, "below the cosine floor")
        how = relation(c.query, c.entry_query, c.cosine)
        if how.kind == "differs":
            return Decision(False, 0.0, "differs in " + ", ".join(how.vetoes))
        blocked = self.gate.blocks(c)
        if how.kind == "same words":
            return Decision(not blocked, 1.0, blocked)
        cut = self.cut_for(namespace)
        score = self.score(c)
        return Decision(not blocked and score >= (cut.same_wording if how.kind == "same wording" else cut.other),
                        score, blocked)


def policy_from_dict(data: dict[str, Any], namespaces: dict[str, float] | None = None,
                     cosine_namespaces: dict[str, float] | None = None) -> ThresholdPolicy:
    """Build a policy from its file form (see `policies.calibration.policy_dict`). A calibrated policy takes
    target rates per namespace, and namespaces that decide by a plain cosine threshold (vetoes kept)."""
    gate = ContextGate(**data.get("context_gate", {}))
    if data["kind"] == "cosine":
        return CosinePolicy(data["threshold"], dict(namespaces or {}), gate)
    if data["kind"] != "calibrated":
        raise ValueError(f"unknown policy kind {data['kind']!r}")
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"policy features {data['features']} do not match this version's {FEATURES}")
    dim = int(data.get("embedding_dim", 0))
    arrays = {k: np.asarray(data[k], dtype=np.float64) for k in ("weights", "mean", "scale")}
    if any(len(a) != len(FEATURES) + 2 * dim for a in arrays.values()):
        raise ValueError("policy weights, mean and scale must have one value per feature")
    return CalibratedPolicy(
        **arrays, bias=data["bias"], thresholds={float(k): Cut(**v) for k, v in data["thresholds"].items()},
        target=data["target_false_hit_rate"], namespaces=dict(namespaces or {}), gate=gate, embedding_dim=dim,
        min_cosine=min([data.get("min_cosine", 0.5), *(cosine_namespaces or {}).values()]),
        cosine_namespaces=dict(cosine_namespaces or {}))
