"""A mergeable latency histogram on fixed log-spaced buckets, so percentiles can be summed across
minutes and replicas (a Redis hash of bucket counts is enough) and still be read back."""
from __future__ import annotations

import bisect
from collections.abc import Iterable

GROWTH = 1.25
BOUNDS_MS: list[float] = [0.25 * GROWTH ** i for i in range(64)]   # 0.25 ms .. ~400 s


def bucket_of(ms: float) -> int:
    return min(bisect.bisect_left(BOUNDS_MS, ms), len(BOUNDS_MS) - 1)


def percentile(counts: dict[int, int], q: float) -> float | None:
    """The q-quantile (0..1) of the recorded values, read as the upper bound of its bucket (≤ 25% high)."""
    total = sum(counts.values())
    if total == 0:
        return None
    rank, seen = q * total, 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        if seen >= rank:
            return round(BOUNDS_MS[bucket], 3)
    return round(BOUNDS_MS[max(counts)], 3)


def merge(parts: Iterable[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for part in parts:
        for bucket, n in part.items():
            out[bucket] = out.get(bucket, 0) + n
    return out
