"""Semantic entries in a `Store` (memory or Redis), keyed `<namespace>:<id>`, with a hit counter beside each.

A guarded store reports an outage as `None`; callers tell "gone" from "unreachable" with `reachable`.
"""
from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from cachegate.cache.answer import CorruptEntry
from cachegate.cache.semantic.entry import SemanticEntry, id_text, parse_id
from cachegate.stores.base import namespaced
from cachegate.stores.guarded import GuardedStore

log = logging.getLogger(__name__)
FETCH_BATCH = 64        # entries per store call (one MGET)


class EntryStore:
    def __init__(self, store: GuardedStore, namespace: str = "semantic") -> None:
        self.store = store
        self.namespace = namespace
        self.hits_namespace = namespace + "-hits"
        self.corrupt = 0

    @property
    def reachable(self) -> bool:
        return self.store.healthy

    def key(self, entry_id: int) -> str:
        return namespaced(self.namespace, id_text(entry_id))

    async def put(self, entry: SemanticEntry) -> bool:
        """Store the entry until it expires; False when the store could not take it."""
        ttl = entry.expires_at - time.time()
        if ttl <= 0:
            return False
        await self.store.set(self.key(entry.id), entry.to_bytes(), ttl)
        return self.reachable

    async def get(self, entry_id: int) -> SemanticEntry | None:
        return (await self.get_many([entry_id]))[0]

    async def get_many(self, ids: list[int]) -> list[SemanticEntry | None]:
        """The entries in order (None where gone or unreadable), fetched in one store call per `FETCH_BATCH`."""
        out: list[SemanticEntry | None] = []
        for i in range(0, len(ids), FETCH_BATCH):
            chunk = ids[i: i + FETCH_BATCH]
            out += [await self._decode(e, raw) for e, raw in zip(chunk, await self.store.get_many(
                [self.key(e) for e in chunk]))]
        return out

    async def _decode(self, entry_id: int, raw: bytes | None) -> SemanticEntry | None:
        if raw is None:
            return None
        try:
            return SemanticEntry.from_bytes(raw)
        except CorruptEntry as exc:
            self.corrupt += 1
            log.warning("dropping unreadable semantic entry %s: %s", id_text(entry_id), exc)
            await self.store.delete(self.key(entry_id))
            return None

    async def delete(self, entry_id: int) -> bool:
        removed = await self.store.delete(self.key(entry_id))
        await self.store.delete(namespaced(self.hits_namespace, id_text(entry_id)))
        return removed

    async def ids(self) -> AsyncIterator[int]:
        async for key in self.store.scan(self.namespace):
            try:
                yield parse_id(key.split(":", 1)[1])
            except ValueError:
                continue

    async def bump_hits(self, entry: SemanticEntry) -> None:
        """Count a hit beside the entry (best effort: replicas may race, the count is approximate)."""
        key = namespaced(self.hits_namespace, id_text(entry.id))
        ttl = entry.expires_at - time.time()
        if ttl > 0:
            raw = await self.store.get(key)
            await self.store.set(key, str(_count(raw) + 1).encode(), ttl)

    async def hits(self, entry_id: int) -> int:
        return _count(await self.store.get(namespaced(self.hits_namespace, id_text(entry_id))))


def _count(raw: bytes | None) -> int:
    """A hit counter as stored; anything unreadable counts as 0 (it is only a statistic)."""
    try:
        return max(0, int(raw or 0))
    except ValueError:
        return 0
