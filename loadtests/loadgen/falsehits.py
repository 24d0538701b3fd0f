"""False-hit accounting. Answers come from real models whose text cannot be predicted, so the text each
miss received is mapped to the intent that asked for it; a hit whose text maps to other intents only is
false, a hit whose text no miss of this run received is unverified (e.g. stored by an earlier run)."""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from loadtests.loadgen.result import Result


@dataclass
class Verdicts:
    hits: int = 0
    correct: int = 0
    false: int = 0
    unverified: int = 0
    false_by_tier: Counter = field(default_factory=Counter)
    unverified_by_tier: Counter = field(default_factory=Counter)
    ambiguous_texts: int = 0      # texts that misses of different intents both received
    examples: list[dict] = field(default_factory=list)

    @property
    def false_hit_rate(self) -> float:
        return self.false / self.hits if self.hits else 0.0

    def check(self) -> None:
        assert self.correct + self.false + self.unverified == self.hits, "every hit gets one verdict"


def producers(results: list[Result]) -> dict[str, set[str]]:
    """Answer text -> the intents whose misses (or bypasses) received it."""
    out: dict[str, set[str]] = defaultdict(set)
    for r in results:
        if r.ok and not r.hit:
            out[r.text].add(r.label)
    return out


def judge(results: list[Result], keep_examples: int = 5) -> Verdicts:
    """Judged after the run, so a hit served before the client finished reading its miss still counts."""
    made = producers(results)
    v = Verdicts(ambiguous_texts=sum(len(labels) > 1 for labels in made.values()))
    for r in results:
        if not r.hit:
            continue
        v.hits += 1
        labels = {r.entry} if r.outcome == "hit-curated" else made.get(r.text)   # curated ids are labels
        if labels is None:
            v.unverified += 1
            v.unverified_by_tier[r.outcome] += 1
        elif r.label in labels:
            v.correct += 1
        else:
            v.false += 1
            v.false_by_tier[r.outcome] += 1
            if len(v.examples) < keep_examples:
                v.examples.append({"asked": r.label, "served_answer_of": sorted(labels), "tier": r.outcome,
                                   "similarity": r.similarity, "text": r.text[:160]})
    v.check()
    return v
