"""Forgetting entries: by id, by tenant and namespace, or every entry whose question is similar to one given.

A deletion reaches the store, this replica's catalog and, through the follower's feed, the other replicas.
"""
from __future__ import annotations

import numpy as np

from cachegate.cache.semantic.entry import SemanticEntry
from cachegate.cache.semantic.parts import TierParts
from policies.thresholds import Candidate


class Invalidation:
    def __init__(self, parts: TierParts) -> None:
        self.parts = parts

    async def delete(self, ids: list[int]) -> list[int]:
        """Delete entries everywhere: the store, this catalog, and (through the feed) other replicas."""
        parts = self.parts
        for i in ids:
            parts.catalog.remove(i)
            await parts.entries.delete(i)
        if parts.follower is not None:
            await parts.follower.publish_delete(ids)
        return ids

    async def invalidate_namespace(self, tenant: str, namespace: str) -> list[int]:
        return await self.delete(self.parts.catalog.ids_where(tenant=tenant, namespace=namespace))

    async def invalidate_similar(self, tenant: str, query: str, namespace: str | None = None,
                                 min_similarity: float | None = None) -> list[int]:
        """Forget every entry of the tenant (optionally one namespace) whose question is similar to `query`:
        cosine ≥ `min_similarity` when given, else what the policy would serve for it, whatever the context."""
        parts = self.parts
        vector = (await parts.embedder.embed([query]))[0]
        doomed: list[int] = []
        fields = {"tenant": tenant} | ({"namespace": namespace} if namespace else {})
        for scope in {parts.catalog.meta[i].scope for i in parts.catalog.ids_where(**fields)}:
            index = parts.catalog.scopes[scope]
            matches = parts.catalog.search(scope, vector, min(len(index), 256))
            floor = parts.policy.invalidation_floor(min_similarity)
            ids = [m.id for m in matches if m.score >= floor]
            for entry in filter(None, await parts.entries.get_many(ids)):
                if self._similar(query, vector, entry, min_similarity):
                    doomed.append(entry.id)
        return await self.delete(doomed)

    def _similar(self, query: str, vector: np.ndarray, entry: SemanticEntry, min_similarity: float | None) -> bool:
        cosine = float(np.dot(vector, entry.query_vector))
        if min_similarity is not None:
            return cosine >= min_similarity
        candidate = Candidate(query, entry.query, cosine, query_vector=vector, entry_vector=entry.query_vector)
        return self.parts.policy.decide(candidate, entry.namespace).hit
