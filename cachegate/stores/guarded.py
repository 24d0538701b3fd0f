"""A store wrapper that turns an unreachable backend into a skipped tier instead of a failed request.

After a failure the store is skipped for `retry_interval_s` (no request waits on a dead socket),
then the next call probes it again; the first success logs that the tier resumed.
"""
from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from cachegate.stores.base import Store, StoreStats, StoreUnavailable

log = logging.getLogger(__name__)


class GuardedStore:
    def __init__(self, store: Store, retry_interval_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.name = store.name
        self.retry_interval_s = retry_interval_s
        self.clock = clock
        self.down_until: float | None = None
        self.failures = 0
        self.skipped = 0

    @property
    def healthy(self) -> bool:
        return self.down_until is None

    async def get(self, key: str) -> bytes | None:
        return await self._guard(self.store.get, None, key)

    async def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        await self._guard(self.store.set, None, key, value, ttl_s)

    async def delete(self, key: str) -> bool:
        return await self._guard(self.store.delete, False, key)

    async def scan(self, namespace: str) -> AsyncIterator[str]:
        if self._skipping():
            return
        try:
            async for key in self.store.scan(namespace):
                yield key
            self._mark_up()
        except StoreUnavailable as exc:
            self._mark_down(exc)

    async def stats(self) -> StoreStats | None:
        return await self._guard(self.store.stats, None)

    async def ping(self) -> bool:
        return await self.store.ping()

    async def close(self) -> None:
        await self.store.close()

    async def _guard(self, fn: Callable[..., Any], default: Any, *args: Any) -> Any:
        if self._skipping():
            return default
        try:
            result = await fn(*args)
        except StoreUnavailable as exc:
            self._mark_down(exc)
            return default
        self._mark_up()
        return result

    def _skipping(self) -> bool:
        if self.down_until is not None and self.clock() < self.down_until:
            self.skipped += 1
            return True
        return False

    def _mark_down(self, exc: Exception) -> None:
        if self.down_until is None:
            log.warning("store %s unavailable, skipping it: %s", self.name, exc)
        self.failures += 1
        self.down_until = self.clock() + self.retry_interval_s

    def _mark_up(self) -> None:
        if self.down_until is not None:
            log.warning("store %s reachable again, tier resumed", self.name)
        self.down_until = None
