"""Counters of what the gateway did: requests by endpoint and cache outcome, routes, tokens and cost
spent and saved. Plain numbers kept in process; the metrics and dashboard export and chart them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from cachegate.backends.base import Usage

HITS = ("hit-exact", "hit-curated", "hit-semantic")
SAVED = HITS + ("joined",)      # outcomes that cost no backend call of their own


@dataclass
class Stats:
    requests: Counter = field(default_factory=Counter)   # (endpoint, cache outcome, status) -> count
    routes: Counter = field(default_factory=Counter)     # (tier, model answering, fell back) -> count
    tokens_served: Counter = field(default_factory=Counter)   # model -> tokens (prompt + completion)
    tokens_saved: Counter = field(default_factory=Counter)    # model -> tokens a hit did not generate
    cost: Counter = field(default_factory=Counter)            # model -> money spent
    cost_saved: Counter = field(default_factory=Counter)      # model -> money a hit saved
    stored: int = 0
    store_errors: int = 0       # answers served but not stored because a store failed

    def count(self, endpoint: str, cache: str, status: int) -> None:
        self.requests[(endpoint, cache, status)] += 1

    def count_route(self, tier: str, model: str, fell_back: bool) -> None:
        self.routes[(tier, model, fell_back)] += 1

    def account(self, cache: str, model: str, usage: Usage, cost: float) -> None:
        if cache in SAVED:
            self.tokens_saved[model] += usage.total_tokens
            self.cost_saved[model] += cost
        else:
            self.tokens_served[model] += usage.total_tokens
            self.cost[model] += cost

    def by_cache(self) -> dict[str, int]:
        out: Counter = Counter()
        for (_, cache, _), n in self.requests.items():
            out[cache] += n
        return dict(out)
