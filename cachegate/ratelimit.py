"""Per-key rate limits: requests and tokens per minute over a sliding window (the current minute's
count plus the previous minute's, weighted by how much of it is still inside the window).

Counts live in Redis when configured, so every replica enforces one budget; in memory otherwise, and
in memory too while Redis is unreachable (degraded, never stopped). Over the limit: 429 with
`retry-after`. Tokens are charged after an answer from a backend (cache hits are free)."""
from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from cachegate.auth import Principal
from cachegate.errors import RateLimited

log = logging.getLogger(__name__)
WINDOW_S = 60.0


class Counters:
    """Per (subject, minute) counts in this process."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], float] = defaultdict(float)

    async def add(self, subject: str, minute: int, amount: float) -> None:
        self.counts[(subject, minute)] += amount
        for old in [k for k in self.counts if k[1] < minute - 1]:
            del self.counts[old]

    async def read(self, subject: str, minute: int) -> tuple[float, float]:
        return self.counts.get((subject, minute - 1), 0.0), self.counts.get((subject, minute), 0.0)


class RedisCounters:
    def __init__(self, client: Redis, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def key(self, subject: str, minute: int) -> str:
        return f"{self.prefix}rl:{subject}:{minute}"

    async def add(self, subject: str, minute: int, amount: float) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.incrbyfloat(self.key(subject, minute), amount)
        pipe.expire(self.key(subject, minute), int(WINDOW_S * 3))
        await pipe.execute()

    async def read(self, subject: str, minute: int) -> tuple[float, float]:
        previous, current = await self.client.mget(self.key(subject, minute - 1), self.key(subject, minute))
        return float(previous or 0), float(current or 0)


class RateLimiter:
    def __init__(self, redis: Redis | None = None, prefix: str = "cachegate:",
                 clock: Callable[[], float] = time.time) -> None:
        self.local = Counters()
        self.shared = RedisCounters(redis, prefix) if redis is not None else None
        self.clock = clock

    async def admit(self, principal: Principal) -> None:
        """Count this request, or refuse it (429) when its key is over either limit."""
        if principal.tokens_per_minute:
            used, retry = await self._used(f"{principal.key_id}:tok")
            if used >= principal.tokens_per_minute:
                raise RateLimited(f"Rate limit reached: {principal.tokens_per_minute} tokens per minute "
                                  f"for this key", retry)
        if principal.requests_per_minute:
            used, retry = await self._used(f"{principal.key_id}:req")
            if used + 1 > principal.requests_per_minute:
                raise RateLimited(f"Rate limit reached: {principal.requests_per_minute} requests per minute "
                                  f"for this key", retry)
            await self._add(f"{principal.key_id}:req", 1)

    async def charge_tokens(self, principal: Principal, tokens: int) -> None:
        if principal.tokens_per_minute and tokens:
            await self._add(f"{principal.key_id}:tok", tokens)

    async def _used(self, subject: str) -> tuple[float, float]:
        """Sliding-window usage, and seconds until the oldest share of it leaves the window."""
        now = self.clock()
        minute, into = int(now // WINDOW_S), (now % WINDOW_S) / WINDOW_S
        previous, current = await self._read(subject, minute)
        return previous * (1 - into) + current, WINDOW_S * (1 - into)

    async def _read(self, subject: str, minute: int) -> tuple[float, float]:
        if self.shared is not None:
            try:
                return await self.shared.read(subject, minute)
            except (RedisError, OSError) as exc:
                log.warning("rate limit counters unreachable in redis, counting in memory: %s", exc)
        return await self.local.read(subject, minute)

    async def _add(self, subject: str, amount: float) -> None:
        minute = int(self.clock() // WINDOW_S)
        if self.shared is not None:
            try:
                return await self.shared.add(subject, minute, amount)
            except (RedisError, OSError):
                pass
        await self.local.add(subject, minute, amount)
