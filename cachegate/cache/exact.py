"""The exact-answer tier: the same request, the same answer, from a store keyed by `exact_key`.

The store is guarded, so Redis going away skips the tier (counted, logged) and requests still
succeed; a corrupt entry is dropped and treated as a miss.
"""
from __future__ import annotations

import logging

from cachegate.cache.answer import CachedAnswer
from cachegate.stores.base import namespaced
from cachegate.stores.guarded import GuardedStore

log = logging.getLogger(__name__)


class ExactTier:
    def __init__(self, store: GuardedStore, namespace: str = "exact", ttl_s: float = 3600.0) -> None:
        self.store = store
        self.namespace = namespace
        self.ttl_s = ttl_s

    async def lookup(self, key: str) -> CachedAnswer | None:
        raw = await self.store.get(namespaced(self.namespace, key))
        if raw is None:
            return None
        try:
            return CachedAnswer.from_bytes(raw)
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("dropping unreadable exact entry %s: %s", key[:16], exc)
            await self.store.delete(namespaced(self.namespace, key))
            return None

    async def put(self, key: str, answer: CachedAnswer, ttl_s: float | None = None) -> None:
        await self.store.set(namespaced(self.namespace, key), answer.to_bytes(), ttl_s or self.ttl_s)
