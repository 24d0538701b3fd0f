"""Storing an answer under a lookup's probe (reusing its vectors), and evicting past the tier's bounds.

A cut answer never replaces one that covers more; a failure while storing is logged and counted, never raised.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from cachegate.cache.answer import CachedAnswer
from cachegate.cache.semantic.entry import SemanticEntry, entry_id
from cachegate.cache.semantic.lookup import Lookup
from cachegate.cache.semantic.parts import TierParts
from policies.eviction import Usage

log = logging.getLogger(__name__)


class Storing:
    def __init__(self, parts: TierParts, delete: Callable[[list[int]], Awaitable[list[int]]]) -> None:
        self.parts = parts
        self.delete = delete      # eviction deletes as invalidation does: everywhere, other replicas included

    async def put(self, probe: Lookup, answer: CachedAnswer, ttl_s: float | None = None) -> SemanticEntry | None:
        try:
            return await self._put(probe, answer, ttl_s or self.parts.cfg.ttl_s)
        except Exception:
            log.exception("storing a semantic entry failed")
            self.parts.counts["errors"] += 1
            return None

    async def _put(self, probe: Lookup, answer: CachedAnswer, ttl_s: float) -> SemanticEntry | None:
        parts = self.parts
        now = time.time()
        id_ = entry_id(probe.scope, probe.probe)
        if not answer.complete and id_ in parts.catalog:     # a cut answer never replaces one covering more
            kept = await parts.entries.get(id_)
            if kept is not None and kept.answer.covers(answer):
                return None
        entry = SemanticEntry(id_, probe.scope, probe.namespace, probe.tenant,
                              probe.probe.query, probe.probe.context, probe.query_vector, probe.context_vector,
                              answer, expires_at=now + ttl_s, created=now)
        if not await parts.entries.put(entry):
            return None
        parts.remember(entry)
        if parts.follower is not None:
            await parts.follower.publish_put(entry.id)
        parts.counts["stored"] += 1
        await self.evict_if_over()
        return entry

    async def evict_if_over(self) -> None:
        parts = self.parts
        if not parts.eviction.over(len(parts.catalog), parts.catalog.bytes):
            return
        usage = [Usage(i, m.last_used, m.size) for i, m in list(parts.catalog.meta.items())]
        victims = parts.eviction.victims(usage, parts.catalog.bytes)
        await self.delete(victims)
        parts.counts["evicted"] += len(victims)
