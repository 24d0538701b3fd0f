"""In-process store: an LRU bounded in bytes, with a TTL per entry.

The default store; one gateway process, nothing to install. Expired entries are dropped when read or
when the byte bound forces eviction (least recently used first).
"""
from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from cachegate.stores.base import StoreStats

ENTRY_OVERHEAD = 64  # bytes charged per entry beyond key and value, so tiny entries are bounded too


@dataclass
class _Entry:
    value: bytes
    expires_at: float | None

    def size(self, key: str) -> int:
        return len(key) + len(self.value) + ENTRY_OVERHEAD


class MemoryStore:
    name = "memory"

    def __init__(self, max_bytes: int = 256 * 1024 * 1024, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes = max_bytes
        self.clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self.evictions = 0

    async def get(self, key: str) -> bytes | None:
        entry = self._live(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry.value

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        return [await self.get(k) for k in keys]

    async def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        self._remove(key)
        entry = _Entry(value, None if ttl_s is None else self.clock() + ttl_s)
        if entry.size(key) > self.max_bytes:
            return  # larger than the whole store: never cached
        self._entries[key] = entry
        self._bytes += entry.size(key)
        self._evict_to_bound()

    async def delete(self, key: str) -> bool:
        return self._remove(key)

    async def scan(self, namespace: str) -> AsyncIterator[str]:
        prefix = namespace + ":"
        for key in [k for k in self._entries if k.startswith(prefix)]:
            if self._live(key) is not None:
                yield key

    async def stats(self) -> StoreStats:
        return StoreStats(entries=len(self._entries), bytes=self._bytes)

    async def ping(self) -> bool:
        return True

    async def probe(self) -> None:
        return None

    async def close(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def _live(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and entry.expires_at is not None and entry.expires_at <= self.clock():
            self._remove(key)
            return None
        return entry

    def _remove(self, key: str) -> bool:
        entry = self._entries.pop(key, None)
        if entry is None:
            return False
        self._bytes -= entry.size(key)
        return True

    def _evict_to_bound(self) -> None:
        while self._bytes > self.max_bytes:
            key = next(iter(self._entries))
            self._remove(key)
            self.evictions += 1
        assert self._bytes >= 0
