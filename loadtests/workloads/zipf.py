"""Zipf popularity: rank k (from 0) is drawn with probability proportional to 1 / (k + 1) ** s."""
from __future__ import annotations

import bisect
import itertools
import random


class Zipf:
    def __init__(self, n: int, s: float = 1.1) -> None:
        assert n > 0 and s > 0
        self.n, self.s = n, s
        self.cumulative = list(itertools.accumulate(1 / (k + 1) ** s for k in range(n)))

    def probability(self, rank: int) -> float:
        return (1 / (rank + 1) ** self.s) / self.cumulative[-1]

    def draw(self, rng: random.Random) -> int:
        return min(bisect.bisect_left(self.cumulative, rng.random() * self.cumulative[-1]), self.n - 1)
