"""The false-hit rate of one namespace, estimated from verified hits: the share judged wrong, with a
Wilson score interval, so a handful of checks does not read as certainty."""
from __future__ import annotations

import math
from dataclasses import dataclass

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
    """Verified hits of a namespace: in all, and since its decision last changed (what the bound reads)."""
    good: int = 0
    bad: int = 0
    good_since: int = 0
    bad_since: int = 0

    def add(self, good: bool) -> None:
        if good:
            self.good, self.good_since = self.good + 1, self.good_since + 1
        else:
            self.bad, self.bad_since = self.bad + 1, self.bad_since + 1

    def restart(self) -> None:
        """The decision changed: evidence about the old one no longer speaks for the new one."""
        self.good_since = self.bad_since = 0

    @property
    def checked(self) -> int:
        return self.good_since + self.bad_since

    @property
    def rate(self) -> float:
        return self.bad_since / self.checked if self.checked else 0.0

    @property
    def upper(self) -> float:
        return wilson_upper(self.bad_since, self.checked)

    def view(self) -> dict:
        return {"good": self.good, "bad": self.bad, "checked_since_change": self.checked,
                "false_hit_rate": round(self.rate, 4), "upper_bound": round(self.upper, 4)}
