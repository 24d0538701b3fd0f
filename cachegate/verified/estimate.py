"""The false-hit rate of one namespace, estimated from verified hits: the share judged wrong among the
recent checks (at most `window`, all since the decision last changed), with a Wilson score interval, so
a handful of checks does not read as certainty and old good evidence does not hide a new drift."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

Z95 = 1.959963984540054


def wilson_upper(bad: int, n: int, z: float = Z95) -> float:
    """Upper bound of the Wilson score interval for `bad` failures in `n` trials (1.0 with no trials)."""
    if n == 0:
        return 1.0
    p = bad / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return min(1.0, (centre + spread) / (1 + z * z / n))


@dataclass
class Tally:
    """Verified hits of a namespace: in all, and the recent ones since its decision last changed (what the
    estimate and its bound read)."""
    window: int = 200
    good: int = 0
    bad: int = 0
    recent: deque = field(default_factory=deque)      # True for a wrong hit
    bad_since: int = 0                                 # wrong hits among `recent`
    since: int = 0                                     # checks since the last change (`recent` keeps the last)

    def add(self, good: bool) -> None:
        self.good, self.bad, self.since = self.good + good, self.bad + (not good), self.since + 1
        self.recent.append(not good)
        self.bad_since += not good
        if len(self.recent) > self.window:
            self.bad_since -= self.recent.popleft()

    def restart(self) -> None:
        """The decision changed: evidence about the old one no longer speaks for the new one."""
        self.recent.clear()
        self.bad_since = self.since = 0

    @property
    def checked(self) -> int:
        return len(self.recent)

    @property
    def rate(self) -> float:
        return self.bad_since / self.checked if self.checked else 0.0

    @property
    def upper(self) -> float:
        return wilson_upper(self.bad_since, self.checked)

    def view(self) -> dict:
        return {"good": self.good, "bad": self.bad, "checked_since_change": self.since, "recent": self.checked,
                "false_hit_rate": round(self.rate, 4), "upper_bound": round(self.upper, 4)}
