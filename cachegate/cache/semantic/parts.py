"""What the semantic tier holds, shared by its four concerns (lookup, store, invalidation, follow): the entry
store, embedder, policy, catalog and eviction bound, its settings and counters, and its background tasks.

The policy may be replaced while serving (verification tightens it, the admin API sets a namespace): every
concern reads it from here at each call.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field

from cachegate.cache.semantic.catalog import Catalog, Meta
from cachegate.cache.semantic.embedder import Embedder
from cachegate.cache.semantic.entries import EntryStore
from cachegate.cache.semantic.entry import SemanticEntry
from cachegate.cache.semantic.follow import Follower
from cachegate.cache.semantic.verifier import Verifier
from policies.eviction import EvictionPolicy
from policies.thresholds import ThresholdPolicy


@dataclass(frozen=True)
class TierConfig:
    ttl_s: float = 3600.0
    top_k: int = 16
    context_turns: int = 1
    max_context_chars: int = 1500
    history: str = "exact"          # "exact": earlier turns must match exactly | "window": see context.py
    sweep_interval_s: float = 30.0


@dataclass
class TierParts:
    entries: EntryStore
    embedder: Embedder
    policy: ThresholdPolicy
    catalog: Catalog
    eviction: EvictionPolicy
    cfg: TierConfig = TierConfig()
    follower: Follower | None = None
    counts: Counter = field(default_factory=Counter)
    _tasks: set = field(default_factory=set)
    verifier: Verifier | None = None     # the matcher's cross-encoder, when the policy is the matcher

    def remember(self, entry: SemanticEntry) -> None:
        """Index an entry of the store in the catalog (its vector, and what eviction and expiry read)."""
        meta = Meta(entry.scope, entry.namespace, entry.tenant, entry.created, entry.expires_at,
                    len(entry.query) + len(entry.context) + len(entry.answer.text) + 1600, last_used=entry.created)
        self.catalog.add(entry.id, entry.vector, meta)

    def background(self, coro) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
