"""A store wrapper that turns a failing backend into a skipped tier instead of a failed request.

Any failure of a call (unreachable, refusing writes, read-only) makes the store `degraded`: it is skipped
for `retry_interval_s` (no request waits on a dead socket), then calls try it again. `degraded` clears
only when a write succeeds again (a request's, or a background probe's), so `/healthz` tells the truth
while reads work and writes fail, and turns back to `ok` on an idle replica as soon as the store is back. Stores that
live in one service (the exact and semantic stores in one Redis) share one `StoreHealth`.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from cachegate.stores.base import Store, StoreStats, StoreUnavailable

log = logging.getLogger(__name__)


class StoreHealth:
    """Whether one backing service answers; shared by the stores that live in it."""

    def __init__(self, name: str, retry_interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.retry_interval_s = retry_interval_s
        self.clock = clock
        self.down_until: float | None = None
        self.degraded = False
        self.failures = 0
        self.skipped = 0
        self._prober: asyncio.Task | None = None

    def skipping(self) -> bool:
        if self.down_until is not None and self.clock() < self.down_until:
            self.skipped += 1
            return True
        return False

    def mark_down(self, exc: Exception) -> None:
        if not self.degraded:
            log.warning("store %s failing, skipping it: %s", self.name, exc)
        self.failures += 1
        self.degraded = True
        self.down_until = self.clock() + self.retry_interval_s

    def mark_up(self) -> None:
        """A call succeeded: stop skipping (still `degraded` until a probe writes)."""
        self.down_until = None

    def recovered(self) -> None:
        if self.degraded:
            log.warning("store %s answers writes again, tier resumed", self.name)
        self.degraded, self.down_until = False, None

    def watch(self, store: Store) -> None:
        """Probe `store` in the background while degraded (from a running event loop)."""
        if self._prober is None:
            self._prober = asyncio.create_task(self._probe_forever(store), name=f"probe-{self.name}")

    async def _probe_forever(self, store: Store) -> None:
        while True:
            await asyncio.sleep(self.retry_interval_s)
            if not self.degraded:
                continue
            try:
                await store.probe()
            except StoreUnavailable as exc:
                self.mark_down(exc)
            else:
                self.recovered()

    async def close(self) -> None:
        if self._prober is not None:
            self._prober.cancel()
            self._prober = None


class GuardedStore:
    def __init__(self, store: Store, retry_interval_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, health: StoreHealth | None = None) -> None:
        self.store = store
        self.name = store.name
        self.health = health or StoreHealth(store.name, retry_interval_s, clock)

    @property
    def healthy(self) -> bool:
        return not self.health.degraded

    @property
    def failures(self) -> int:
        return self.health.failures

    async def get(self, key: str) -> bytes | None:
        return await self._guard(self.store.get, None, key)

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        return await self._guard(self.store.get_many, [None] * len(keys), keys)

    async def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        await self._guard(self.store.set, None, key, value, ttl_s, wrote=True)

    async def delete(self, key: str) -> bool:
        return await self._guard(self.store.delete, False, key)

    async def scan(self, namespace: str) -> AsyncIterator[str]:
        if self.health.skipping():
            return
        try:
            async for key in self.store.scan(namespace):
                yield key
            self.health.mark_up()
        except StoreUnavailable as exc:
            self.health.mark_down(exc)

    async def stats(self) -> StoreStats | None:
        return await self._guard(self.store.stats, None)

    async def ping(self) -> bool:
        return await self.store.ping()

    def watch(self) -> None:
        self.health.watch(self.store)

    async def close(self) -> None:
        await self.health.close()
        await self.store.close()

    async def _guard(self, fn: Callable[..., Any], default: Any, *args: Any, wrote: bool = False) -> Any:
        if self.health.skipping():
            return default
        try:
            result = await fn(*args)
        except StoreUnavailable as exc:
            self.health.mark_down(exc)
            return default
        self.health.recovered() if wrote else self.health.mark_up()
        return result
