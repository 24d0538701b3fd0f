"""Holding each namespace under its false-hit target: every verified hit (a shadow re-ask or a client's
feedback) is tallied: the recent ones (at most `window`) since the namespace's decision last changed are
its evidence. When the rate seen passes the target
and so does its upper confidence bound (Wilson 95%), the decision tightens one step; it loosens one step
again only on evidence (`loosen_evidence` checks and the upper bound under the target, so the namespace
is confidently within it), never past the configured setting. Every change is logged and kept for the
dashboard."""
from __future__ import annotations

import logging
import time
from collections import defaultdict, deque
from dataclasses import dataclass

from cachegate.verified.estimate import Tally
from cachegate.verified.knobs import Knob, knob_of, looser, stricter, with_knob

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Change:
    at: float
    namespace: str
    knob: str
    before: float
    after: float
    why: str

    def view(self) -> dict:
        return {"at": self.at, "namespace": self.namespace, "knob": self.knob, "before": self.before,
                "after": self.after, "why": self.why}


class TargetController:
    def __init__(self, tier, targets: dict[str, float], default_target: float = 0.02, min_evidence: int = 20,
                 loosen_evidence: int = 200, window: int = 200, history: int = 100) -> None:
        self.tier = tier                      # its `policy` is read and replaced
        self.targets = targets
        self.default_target = default_target
        self.min_evidence = min_evidence
        self.loosen_evidence = loosen_evidence
        self.tallies: dict[str, Tally] = defaultdict(lambda: Tally(window))
        self.bases: dict[str, Knob] = {}
        self.changes: deque[Change] = deque(maxlen=history)
        self.by_source: dict[tuple[str, str, bool], int] = defaultdict(int)

    def target(self, namespace: str) -> float:
        return self.targets.get(namespace, self.default_target)

    def record(self, namespace: str, good: bool, source: str) -> None:
        tally = self.tallies[namespace]
        tally.add(good)
        self.by_source[(namespace, source, good)] += 1
        self.bases.setdefault(namespace, knob_of(self.tier.policy, namespace))
        target = self.target(namespace)
        if tally.since >= self.min_evidence and tally.rate > target and tally.upper > target:
            self._step(namespace, tighten=True)
        elif tally.since >= self.loosen_evidence and tally.upper < target:
            self._step(namespace, tighten=False)

    def _step(self, namespace: str, tighten: bool) -> None:
        tally, policy = self.tallies[namespace], self.tier.policy
        knob = knob_of(policy, namespace)
        value = stricter(policy, knob) if tighten else looser(policy, knob, self.bases[namespace])
        if value is None:
            return
        why = (f"{tally.bad_since} of the last {tally.checked} checks wrong, upper bound {tally.upper:.3f} "
               f"{'>' if tighten else '<'} target {self.target(namespace)}")
        self.tier.policy = with_knob(policy, namespace, knob.kind, value)
        self.changes.append(Change(time.time(), namespace, knob.kind, knob.value, value, why))
        log.warning("semantic namespace %s %s: %s %s -> %s (%s)", namespace, "tightened" if tighten else "loosened",
                    knob.kind, knob.value, value, why)
        tally.restart()

    def view(self) -> dict:
        policy = self.tier.policy
        namespaces = {}
        for name, tally in self.tallies.items():
            knob = knob_of(policy, name)
            namespaces[name] = tally.view() | {"target": self.target(name), knob.kind: knob.value,
                                               "configured": self.bases[name].value}
        verdicts = [{"namespace": n, "source": source, "verdict": "good" if good else "bad", "count": count}
                    for (n, source, good), count in sorted(self.by_source.items())]
        return {"namespaces": namespaces, "changes": [c.view() for c in self.changes], "verdicts": verdicts}
