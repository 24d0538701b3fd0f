"""Eviction: which semantic entries go when the entry count or the bytes pass their bounds.

Least recently used first (a hit refreshes an entry, a new entry counts as used when stored), down to
`low_water` of each bound so eviction runs in batches rather than on every insert.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Usage:
    id: int
    last_used: float
    size: int


@dataclass(frozen=True)
class EvictionPolicy:
    max_entries: int
    max_bytes: int
    low_water: float = 0.95

    def over(self, entries: int, total_bytes: int) -> bool:
        return entries > self.max_entries or total_bytes > self.max_bytes

    def victims(self, usage: list[Usage], total_bytes: int) -> list[int]:
        keep_entries = int(self.max_entries * self.low_water)
        keep_bytes = int(self.max_bytes * self.low_water)
        out: list[int] = []
        count = len(usage)
        for u in sorted(usage, key=lambda u: u.last_used):
            if count <= keep_entries and total_bytes <= keep_bytes:
                break
            out.append(u.id)
            count -= 1
            total_bytes -= u.size
        return out
