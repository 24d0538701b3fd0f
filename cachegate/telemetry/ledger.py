"""The dashboard's view of cache entries: what was stored (question, answer preview, tier, tenant),
how often each was hit and how close the last hit was, and the most recent misses. Bounded, in process.
"""
from __future__ import annotations

import time
from collections import OrderedDict, deque
from dataclasses import asdict, dataclass, field

PREVIEW_CHARS = 160


@dataclass
class LedgerEntry:
    tier: str                 # "exact" | "semantic"
    key: str                  # exact key, or semantic entry id
    tenant: str
    namespace: str
    model: str
    question: str
    answer: str
    created: float = field(default_factory=time.time)
    hits: int = 0
    last_hit: float | None = None
    last_similarity: float | None = None

    def view(self, now: float) -> dict:
        return asdict(self) | {"age_s": round(now - self.created, 1)}


@dataclass
class Miss:
    at: float
    question: str
    model: str
    latency_ms: float
    route: str


class Ledger:
    def __init__(self, max_entries: int = 5000, max_misses: int = 50) -> None:
        self.entries: OrderedDict[str, LedgerEntry] = OrderedDict()
        self.max_entries = max_entries
        self.misses: deque[Miss] = deque(maxlen=max_misses)

    def stored(self, entry: LedgerEntry) -> None:
        entry.question = entry.question[:PREVIEW_CHARS * 2]
        entry.answer = entry.answer[:PREVIEW_CHARS]
        self.entries[entry.key] = entry
        self.entries.move_to_end(entry.key)
        while len(self.entries) > self.max_entries:
            self.entries.popitem(last=False)

    def hit(self, key: str, similarity: float | None = None) -> None:
        entry = self.entries.get(key)
        if entry is None:
            return
        entry.hits += 1
        entry.last_hit = time.time()
        entry.last_similarity = similarity
        self.entries.move_to_end(key)

    def missed(self, question: str, model: str, latency_ms: float, route: str) -> None:
        self.misses.appendleft(Miss(time.time(), question[:PREVIEW_CHARS * 2], model, round(latency_ms, 1), route))

    def forget(self, key: str) -> None:
        self.entries.pop(key, None)

    def forget_where(self, tenant: str, namespace: str | None = None) -> None:
        for key in [k for k, e in self.entries.items()
                    if e.tenant == tenant and (namespace is None or e.namespace == namespace)]:
            del self.entries[key]

    def top(self, n: int = 20) -> list[dict]:
        now = time.time()
        ranked = sorted(self.entries.values(), key=lambda e: (e.hits, e.last_hit or 0), reverse=True)
        return [e.view(now) for e in ranked[:n]]

    def search(self, text: str, n: int = 50) -> list[dict]:
        needle, now = text.lower(), time.time()
        found = [e for e in reversed(self.entries.values())
                 if needle in e.question.lower() or needle in e.answer.lower() or needle == e.key]
        return [e.view(now) for e in found[:n]]

    def recent_misses(self, n: int = 20) -> list[dict]:
        return [asdict(m) for m in list(self.misses)[:n]]
