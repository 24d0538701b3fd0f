"""Counters of what the gateway did: requests by endpoint and cache outcome, stores, errors.

Plain numbers kept in process; the metrics and dashboard issues export and chart them.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Stats:
    requests: Counter = field(default_factory=Counter)   # (endpoint, cache outcome, status) -> count
    stored: int = 0

    def count(self, endpoint: str, cache: str, status: int) -> None:
        self.requests[(endpoint, cache, status)] += 1

    def by_cache(self) -> dict[str, int]:
        out: Counter = Counter()
        for (_, cache, _), n in self.requests.items():
            out[cache] += n
        return dict(out)
