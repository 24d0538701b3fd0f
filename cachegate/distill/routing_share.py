"""The share of traffic the small tier can take at a given agreement with the large tier.

The router sends a request small when its complexity score is below the cut. Moving the cut up routes
the next-simplest requests small as well; the share at agreement T is the largest share of requests,
taken simplest first, whose small-tier answers agree with the large tier's at a rate of at least T (a cut
falls only between different scores). The cut itself is what `routing.complexity.threshold` would be.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from cachegate.backends.base import BackendRequest, Sampling
from cachegate.distill.entry import AnswerEntry
from cachegate.routing.router import route_input
from policies.routing import ComplexityRouter


@dataclass(frozen=True)
class Share:
    target: float         # agreement rate asked of the requests routed small
    share: float          # of all requests, those routed small at the highest cut that keeps the target
    threshold: float      # the cut: routing.complexity.threshold (inf: everything small)
    agree_rate: float     # the agreement rate actually reached on that share


def router_score(entry: AnswerEntry, router: ComplexityRouter | None = None) -> float:
    """The complexity score the gateway's router gives this request under `model: auto`."""
    router = router or ComplexityRouter()
    explicit = entry.max_tokens is not None
    request = BackendRequest(model="auto", params=Sampling(max_tokens=entry.max_tokens or 256),
                             messages=entry.messages, prompt=entry.prompt, max_tokens_explicit=explicit)
    return router.score(route_input("chat" if entry.messages is not None else "completions", request))[0]


def share_at(scores: list[float], agrees: list[bool], target: float) -> Share:
    pairs = sorted(zip(scores, agrees))
    best, agreed = Share(target, 0.0, pairs[0][0] if pairs else 0.0, 0.0), 0
    for k, (score, ok) in enumerate(pairs, start=1):
        agreed += ok
        cut = pairs[k][0] if k < len(pairs) else math.inf
        if cut > score and agreed / k >= target:
            best = Share(target, round(k / len(pairs), 4), round(cut, 4), round(agreed / k, 4))
    return best


def shares(scores: list[float], agrees: list[bool], targets: tuple[float, ...]) -> list[Share]:
    return [share_at(scores, agrees, t) for t in targets]


def share_below(scores: list[float], threshold: float) -> float:
    """The share the router sends small today at `threshold` (score below it)."""
    return round(sum(s < threshold for s in scores) / max(1, len(scores)), 4)
