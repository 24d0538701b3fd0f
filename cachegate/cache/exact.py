"""The exact-answer tier: the same request, the same answer, from a store keyed by `exact_key`.

Entries live at `exact:<tenant>/<namespace>/<key>`, so a tenant or a namespace can be purged with
one scan. The store is guarded: Redis going away skips the tier (counted, logged) and requests still
succeed; a corrupt entry is dropped, counted and treated as a miss. A cut answer (`max_tokens`) never
replaces one that covers more.
"""
from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from urllib.parse import quote

from cachegate.cache.answer import CachedAnswer, CorruptEntry
from cachegate.stores.base import namespaced
from cachegate.stores.guarded import GuardedStore

log = logging.getLogger(__name__)
DECODED = 4096      # recently read answers kept decoded, keyed by their path and checked against the bytes


class ExactTier:
    def __init__(self, store: GuardedStore, namespace: str = "exact", ttl_s: float = 3600.0) -> None:
        self.store = store
        self.namespace = namespace
        self.ttl_s = ttl_s
        self.corrupt = 0
        self.decoded: OrderedDict[str, tuple[bytes, CachedAnswer]] = OrderedDict()

    def path(self, tenant: str, namespace: str, key: str) -> str:
        return f"{self.prefix(tenant, namespace)}{key}"

    @functools.lru_cache(maxsize=4096)      # noqa: B019 - one per tier, bounded: (tenant, namespace) pairs
    def prefix(self, tenant: str, namespace: str) -> str:
        return namespaced(self.namespace, f"{quote(tenant, safe='')}/{quote(namespace, safe='')}/")

    async def lookup(self, tenant: str, namespace: str, key: str) -> CachedAnswer | None:
        path = self.path(tenant, namespace, key)
        raw = await self.store.get(path)
        if raw is None:
            return None
        known = self.decoded.get(path)
        if known is not None and known[0] == raw:       # the same bytes: the same answer, no JSON to read
            self.decoded.move_to_end(path)
            return known[1]
        try:
            answer = CachedAnswer.from_bytes(raw)
        except CorruptEntry as exc:
            self.corrupt += 1
            log.warning("dropping unreadable exact entry %s: %s", key[:16], exc)
            await self.store.delete(path)
            return None
        self.decoded[path] = (raw, answer)
        if len(self.decoded) > DECODED:
            self.decoded.popitem(last=False)
        return answer

    async def put(self, tenant: str, namespace: str, key: str, answer: CachedAnswer,
                  ttl_s: float | None = None) -> bool:
        """Store the answer, unless it is cut and the entry there already covers it; True when stored."""
        path = self.path(tenant, namespace, key)
        if not answer.complete:
            kept = await self.lookup(tenant, namespace, key)
            if kept is not None and kept.covers(answer):
                return False
        await self.store.set(path, answer.to_bytes(), ttl_s or self.ttl_s)
        return True

    async def delete(self, key: str) -> bool:
        """Forget one entry by its key (the `x-cachegate-key` header), whatever its tenant."""
        deleted = False
        async for path in self.store.scan(self.namespace):
            if path.endswith("/" + key):
                deleted = await self.store.delete(path) or deleted
        return deleted

    async def purge(self, tenant: str, namespace: str | None = None) -> int:
        """Forget every entry of a tenant, or of one of its namespaces; returns how many went."""
        prefix = f"{self.namespace}:{quote(tenant, safe='')}/"
        if namespace is not None:
            prefix += f"{quote(namespace, safe='')}/"
        doomed = [path async for path in self.store.scan(self.namespace) if path.startswith(prefix)]
        for path in doomed:
            await self.store.delete(path)
        return len(doomed)
