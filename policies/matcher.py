"""The trained matcher's decision: which cached entry, if any, answers a question, at a target false-hit rate.

The tier retrieves candidates by plain MiniLM cosine; the matcher re-ranks them with its tuned projection and
serves the closest servable entry when it is close enough *and* clearly closer than the closest entry of another
answer (the margin): a question near two different answers is the one a cache gets wrong, however close both
are. The same words always hit; the same wording ("how do I" / "how can I") needs only the cosine. With no other
answer retrieved there is no margin to read, and a stricter cosine alone decides (fitted with held-apart Quora
pairs, the hardest lone lookups we have). The cut (a tuned cosine, a margin and that lone cosine per target
false-hit rate) is fitted on domains the projection never saw (`cachegate.matcher_train`), so it holds on a
customer's domain rather than on the training data's. When the matcher ships a verifier (a cross-encoder, run
by the tier on the one entry about to be served), its logit is a further gate. Key differences
(`policies.differences`) and the context gate never serve.
Pure numpy.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, NamedTuple

import numpy as np

from policies.differences import Relation, by_chance, relation, slots_spanned
from policies.thresholds import Candidate, ContextGate, CosinePolicy, Decision, PolicyBase

EVIDENCE = ("tuned_cosine", "margin", "logit")
TIGHTEN_STEP = 0.02       # a step past the strictest fitted cut: this much more tuned cosine and margin
COSINE_CEILING = 0.99


class Choice(NamedTuple):
    index: int | None     # the candidate served, None on a miss
    decision: Decision


class Cut(NamedTuple):
    """The gates of one target false-hit rate."""
    cosine: float                 # the served entry's tuned cosine at least this
    margin: float                 # and this much above the closest entry of another answer
    lone: float = 1.01            # with no entry of another answer retrieved: the tuned cosine needed instead
    logit: float | None = None    # and the verifier's logit at least this (None: no verifier gate)


@dataclass(frozen=True)
class Evidence:
    """What the decision reads about the best servable candidate of one lookup."""
    index: int
    tuned_cosine: float
    rival: float | None           # the closest candidate with another answer (None without one)

    @property
    def margin(self) -> float:
        return self.tuned_cosine - (self.rival if self.rival is not None else 0.0)


@dataclass(frozen=True)
class MatcherPolicy(PolicyBase):    # its floors, knob and view: PolicyBase
    projection: np.ndarray               # (d, d): tuned vector = normalise(projection @ plain vector)
    thresholds: dict[float, Cut]         # target false-hit rate -> cut
    target: float                        # the default target
    min_cosine: float = 0.3              # plain cosine below which the tier does not fetch an entry
    namespaces: dict[str, float] = field(default_factory=dict)           # namespace -> target
    cosine_namespaces: dict[str, float] = field(default_factory=dict)    # namespace -> plain cosine threshold
    gate: ContextGate = field(default_factory=ContextGate)
    unverified_cosine: float = 0.95      # a verifier-gated decision made without a logit (invalidation) needs this
    same_answer: float = 0.9             # two free-text answers this close (embedded) say the same: not rivals
    free_text_words: int = 8             # answers shorter than this (labels, numbers, names) must be equal
    lift_slots: bool = True              # a number or name the answer is seen not to depend on does not veto
    judges_together: ClassVar[bool] = True     # the margin reads the closest entry of another answer

    def contenders(self, candidates: list[Candidate], answers: list[str], namespace: str = "default",
                   tuned: np.ndarray | None = None) -> list[int]:
        """Candidates whose answer differs from the closest candidate's and would block it by the margin, when both
        answers are free text: whether they say the same decides whether they are rivals (`merge_answers`). The
        closest candidate first; empty when there is nothing to decide. `tuned`: `tuned_cosines`, when the
        caller has them already (every method here takes them)."""
        if not candidates or namespace in self.cosine_namespaces:
            return []
        tuned = self.tuned_cosines(candidates) if tuned is None else tuned
        best = int(np.argmax(tuned))
        cut = self.cut_for(namespace)
        if tuned[best] < cut.cosine or not self.free_text(answers[best]):
            return []
        blocking = [i for i, a in enumerate(answers) if a != answers[best] and self.free_text(a)
                    and tuned[best] - tuned[i] < cut.margin]
        return [best, *blocking] if blocking else []

    def free_text(self, answer: str) -> bool:
        return len(answer.split()) >= self.free_text_words

    @property
    def uses_verifier(self) -> bool:
        return any(c.logit is not None for c in self.thresholds.values())

    def tuned(self, vector: np.ndarray) -> np.ndarray:
        v = self.projection @ np.asarray(vector, dtype=np.float32)
        return v / max(float(np.linalg.norm(v)), 1e-12)

    def tuned_cosines(self, candidates: list[Candidate]) -> np.ndarray:
        """Every candidate's tuned cosine with the question, in one product (the candidates of one lookup share
        its question vector)."""
        if not candidates:
            return np.zeros(0, dtype=np.float32)
        entries = np.stack([np.asarray(c.entry_vector, dtype=np.float32) for c in candidates]) @ self.projection.T
        entries /= np.maximum(np.linalg.norm(entries, axis=1, keepdims=True), 1e-12)
        return entries @ self.tuned(candidates[0].query_vector)

    def cut_for(self, namespace: str) -> Cut:
        target = self.namespaces.get(namespace, self.target)
        allowed = [t for t in self.thresholds if t <= target + 1e-12]
        return self.thresholds[max(allowed) if allowed else min(self.thresholds)]

    def evidence(self, candidates: list[Candidate], answers: list[str],
                 tuned: np.ndarray | None = None) -> tuple[Evidence | None, str, list[str]]:
        """The closest servable candidate with its margin over the closest candidate of another answer (blocked
        candidates count as rivals: a vetoed near miss is exactly what makes a question ambiguous), its relation
        kind, and why the closer ones may not be served. Vetoes and the gate are read closest first, only until
        a candidate passes them."""
        tuned = self.tuned_cosines(candidates) if tuned is None else tuned
        blocked = []
        for i in np.argsort(-tuned, kind="stable"):
            c = candidates[i]
            how = relation(c.query, c.entry_query, c.cosine)
            if how.kind == "differs" and self.lift_slots and self.spans(candidates, int(i), how.vetoes):
                how = Relation("other")
            why = "differs in " + ", ".join(how.vetoes) if how.kind == "differs" else self.gate.blocks(c)
            if not why:
                rival = max((float(t) for t, a in zip(tuned, answers) if a != answers[i]), default=None)
                return Evidence(int(i), float(tuned[i]), rival), how.kind, blocked
            blocked.append(why)
        return None, "", blocked

    def spans(self, candidates: list[Candidate], i: int, vetoes: tuple[str, ...]) -> bool:
        """Whether candidate i's vetoes are only numbers or names in which its entry differs from another retrieved
        entry holding the same stored answer (`slots_spanned`): the cache saw that answer given whatever the slot
        held. Never for an answer that coincides by chance (`by_chance`) or an entry whose answer is not known."""
        answer = candidates[i].entry_answer
        if answer is None:
            return False
        others = [c.entry_query for k, c in enumerate(candidates) if k != i and c.entry_answer == answer]
        return bool(others) and not by_chance(answer, self.free_text_words) and \
            slots_spanned(candidates[i].entry_query, vetoes, others)

    def shortlist(self, candidates: list[Candidate], answers: list[str], namespace: str = "default",
                  tuned: np.ndarray | None = None) -> list[int]:
        """The candidate the verifier should score: the one about to be served by cosine and margin (or none)."""
        if not self.uses_verifier or namespace in self.cosine_namespaces:
            return []
        found, kind, _ = self.evidence(candidates, answers, tuned)
        if found is None or kind == "same words" or not self._passes(found, self.cut_for(namespace), kind):
            return []
        return [found.index]

    def choose(self, candidates: list[Candidate], answers: list[str], namespace: str = "default",
               tuned: np.ndarray | None = None) -> Choice:
        """The decision over one lookup's candidates and their answers' keys (`verified` set where scored)."""
        if namespace in self.cosine_namespaces:
            return self._by_cosine(candidates, namespace)
        found, kind, blocked = self.evidence(candidates, answers, tuned)
        if found is None:
            return Choice(None, Decision(False, 0.0, "; ".join(dict.fromkeys(blocked)) or "no candidate"))
        if kind == "same words":
            return Choice(found.index, Decision(True, 1.0, "the same words"))
        cut = self.cut_for(namespace)
        score = max(0.0, min(1.0, found.tuned_cosine))
        if not self._passes(found, cut, kind):
            why_not = "too close to another answer" if found.rival is not None and found.tuned_cosine >= cut.cosine \
                else "below the cut"
            return Choice(None, Decision(False, score, why_not))
        if cut.logit is not None:
            logit = candidates[found.index].verified
            if logit is None:
                return self._unverified(candidates[found.index], found.index)
            if logit < cut.logit:
                return Choice(None, Decision(False, score, "the verifier disagrees"))
        return Choice(found.index, Decision(True, score))

    @staticmethod
    def _passes(found: Evidence, cut: Cut, kind: str = "") -> bool:
        if kind == "same wording" and found.tuned_cosine >= cut.cosine:
            return True           # the same content words in the same order: no rival can sit between them
        if found.rival is None:
            return found.tuned_cosine >= cut.lone
        return found.tuned_cosine >= cut.cosine and found.margin >= cut.margin

    def _unverified(self, c: Candidate, index: int) -> Choice:
        decision = CosinePolicy(self.unverified_cosine, gate=self.gate).decide(c)
        return Choice(index if decision.hit else None, decision)

    def decide(self, c: Candidate, namespace: str = "default") -> Decision:
        """One candidate on its own (pair mode, invalidation): no rival, so the lone cut decides."""
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

    def past_strictest(self) -> tuple[float, Cut] | None:
        """A target half the strictest fitted one, with that cut a step stricter (cosine and margin; the lone cut
        and the verifier floor kept): where verified hits say even the strictest fitted cut serves too many wrong
        answers (a cache still filling: the right answer's entries, which the margin is read against, not yet
        stored), the namespace can still tighten. None once the cosine is at its ceiling."""
        strictest = min(self.thresholds)
        cut = self.thresholds[strictest]
        if cut.cosine >= COSINE_CEILING:
            return None
        cosine = round(min(COSINE_CEILING, cut.cosine + TIGHTEN_STEP), 4)
        lone = cut.lone if cut.lone > 1.0 else round(min(COSINE_CEILING, max(cut.lone, cosine)), 4)
        return strictest / 2, Cut(cosine, round(cut.margin + TIGHTEN_STEP, 4), lone, cut.logit)

    def with_cut(self, target: float, cut: Cut) -> MatcherPolicy:
        return replace(self, thresholds={**self.thresholds, target: cut})


def merge_answers(answers: list[str], contenders: list[int], vectors: np.ndarray, same: float) -> list[str]:
    """The answer keys with each contender that says what the first contender says (embedded answers at least
    `same` close) given the first's key: an answer generated twice for one question is one answer."""
    if not contenders:
        return answers
    merged = list(answers)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    for k, i in enumerate(contenders[1:], start=1):
        if float(unit[0] @ unit[k]) >= same:
            merged = [answers[contenders[0]] if a == answers[i] else a for a in merged]
    return merged


def best_evidence(tuned: list[float], answers: list[str], blocked: list[bool]) -> Evidence | None:
    """The closest servable candidate by tuned cosine and the closest candidate of another answer (None when every
    candidate is blocked)."""
    servable = [i for i in range(len(tuned)) if not blocked[i]]
    if not servable:
        return None
    best = max(servable, key=lambda i: tuned[i])
    rival = max((t for t, a in zip(tuned, answers) if a != answers[best]), default=None)
    return Evidence(best, tuned[best], rival)


def matcher_from_dict(data: dict[str, Any], projection: np.ndarray, namespaces: dict[str, float] | None = None,
                      cosine_namespaces: dict[str, float] | None = None) -> MatcherPolicy:
    """The policy from `matcher.json` (see `cachegate.matcher_train`) and the projection stored beside it."""
    if tuple(data["evidence"]) != EVIDENCE:
        raise ValueError(f"matcher evidence {data['evidence']} does not match this version's {EVIDENCE}: "
                         "rebuild it with `cachegate train matcher`")
    d = data["decision"]
    return MatcherPolicy(
        projection=np.asarray(projection, dtype=np.float32),
        thresholds={float(k): Cut(float(v["cosine"]), float(v["margin"]), float(v["lone"]),
                                  None if v.get("logit") is None else float(v["logit"]))
                    for k, v in d["thresholds"].items()},
        target=float(d["target_false_hit_rate"]),
        min_cosine=min([float(d["min_cosine"]), *(cosine_namespaces or {}).values()]),
        namespaces=dict(namespaces or {}), cosine_namespaces=dict(cosine_namespaces or {}),
        gate=ContextGate(**data.get("context_gate", {})), lift_slots=bool(d.get("lift_slots", True)))
