"""The semantic tier: embed the question in its context, search its scope, let the policy decide.

A facade over the tier's parts (`parts.TierParts`: store, embedder, policy, catalog...) and its four concerns:
`lookup` (probe, search, judgement), `store` (storing, eviction), `invalidation`, and `follow` (the catalog
kept in step with the shared store). `lookup` returns the probe, its scope and vectors, and the hit if any;
`put` stores an answer under the same probe (reusing the lookup's vectors). Any failure inside the tier
degrades it to a miss.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

from cachegate.backends.base import BackendRequest
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.semantic.entry import SemanticEntry
from cachegate.cache.semantic.follow import CatalogSync
from cachegate.cache.semantic.invalidation import Invalidation
from cachegate.cache.semantic.lookup import Hit, Lookup, Lookups
from cachegate.cache.semantic.parts import TierConfig, TierParts
from cachegate.cache.semantic.store import Storing

__all__ = ["Hit", "Lookup", "SemanticTier", "TierConfig"]


@dataclass
class SemanticTier(TierParts):
    """The parts (fields of `TierParts`, replaceable while serving: `policy`, `follower`, `verifier`) and one
    operation per use, each handed to the concern that owns it."""

    def __post_init__(self) -> None:
        self.lookups = Lookups(self)
        self.invalidation = Invalidation(self)
        self.storing = Storing(self, self.invalidation.delete)
        self.sync = CatalogSync(self.entries, self.catalog, self.remember)

    # -- lookups (lookup.py) ---------------------------------------------------------------------
    async def prepare(self, endpoint: str, request: BackendRequest, namespace: str) -> Lookup | None:
        return await self.lookups.prepare(endpoint, request, namespace)

    async def lookup(self, endpoint: str, request: BackendRequest, namespace: str = "default",
                     max_age_s: float | None = None) -> Lookup | None:
        return await self.lookups.lookup(endpoint, request, namespace, max_age_s)

    async def find(self, probe: Lookup, max_age_s: float | None = None) -> Hit | None:
        return await self.lookups.find(probe, max_age_s)

    def judge(self, probe: Lookup, entry: SemanticEntry) -> Hit | None:
        return self.lookups.judge(probe, entry)

    # -- storing (store.py) ----------------------------------------------------------------------
    async def put(self, probe: Lookup, answer: CachedAnswer, ttl_s: float | None = None) -> SemanticEntry | None:
        return await self.storing.put(probe, answer, ttl_s)

    # -- invalidation (invalidation.py) ----------------------------------------------------------
    async def delete(self, ids: list[int]) -> list[int]:
        return await self.invalidation.delete(ids)

    async def invalidate_namespace(self, tenant: str, namespace: str) -> list[int]:
        return await self.invalidation.invalidate_namespace(tenant, namespace)

    async def invalidate_similar(self, tenant: str, query: str, namespace: str | None = None,
                                 min_similarity: float | None = None) -> list[int]:
        return await self.invalidation.invalidate_similar(tenant, query, namespace, min_similarity)

    # -- the catalog in step with the store (follow.py) ------------------------------------------
    async def load(self) -> None:
        await self.sync.load()

    async def follow_put(self, entry_id: int) -> None:
        await self.sync.follow_put(entry_id)

    def sweep(self) -> int:
        return self.sync.sweep()

    # -- life ------------------------------------------------------------------------------------
    async def start(self) -> None:
        await asyncio.to_thread(lambda: self.embedder.forward)   # load and trace the model before the first request
        if self.follower is not None:
            await self.follower.start()
        else:
            await self.load()
        self.background(self.sync.sweep_forever(self.cfg.sweep_interval_s))

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self.follower is not None:
            await self.follower.close()
        self.catalog.close()
        self.embedder.close()
        if self.verifier is not None:
            self.verifier.close()

    async def drain(self) -> None:
        """Wait for background work (hit counters) to finish; for tests and shutdown."""
        await asyncio.gather(*[t for t in self._tasks if t.get_name() != "sweeper"], return_exceptions=True)
