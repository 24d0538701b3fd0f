"""Per-minute counters for the last hour: requests by outcome, latency histograms, tokens and money.

Each replica adds to its own minute buckets; with Redis, deltas are flushed every couple of seconds
with HINCRBYFLOAT into one hash per minute shared by all replicas, so the dashboard reads the sum of
the whole fleet. Field names: `req:<outcome>`, `lat:<outcome>:<bucket>`, `ttft:<outcome>:<bucket>`,
`route:<tier>`, `tokens_saved`, `cost_saved`, `tokens_served`, `cost`, `routing_saved`.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


class MinuteSeries:
    def __init__(self, minutes: int = 60, clock: Callable[[], float] = time.time, flushed: bool = True) -> None:
        """`flushed`: keep the deltas a fleet flush takes (`take_unflushed`); off for a lone replica."""
        self.minutes = minutes
        self.clock = clock
        self.flushed = flushed
        self.buckets: dict[int, Counter] = defaultdict(Counter)
        self.unflushed: dict[int, Counter] = defaultdict(Counter)

    def minute(self) -> int:
        return int(self.clock() // 60)

    def add(self, fields: dict[str, float]) -> None:
        now = self.minute()
        if now not in self.buckets:           # a new minute: drop the ones that left the window
            for old in [m for m in self.buckets if m <= now - self.minutes]:
                del self.buckets[old]
        self.buckets[now].update(fields)
        if self.flushed:
            self.unflushed[now].update(fields)

    def window(self) -> list[tuple[int, Counter]]:
        now = self.minute()
        return [(m, self.buckets.get(m, Counter())) for m in range(now - self.minutes + 1, now + 1)]

    def take_unflushed(self) -> dict[int, Counter]:
        out, self.unflushed = self.unflushed, defaultdict(Counter)
        return out


class RedisSeries:
    """The fleet's minute buckets in Redis: this replica's deltas in, everyone's sums out."""

    def __init__(self, local: MinuteSeries, client: Redis, prefix: str) -> None:
        self.local = local
        self.client = client
        self.prefix = prefix

    def key(self, minute: int) -> str:
        return f"{self.prefix}stats:{minute}"

    async def flush(self) -> None:
        pending = self.local.take_unflushed()
        if not pending:
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for minute, fields in pending.items():
                for field, value in fields.items():
                    pipe.hincrbyfloat(self.key(minute), field, value)
                pipe.expire(self.key(minute), (self.local.minutes + 5) * 60)
            await pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning("stats flush to redis failed, kept for the next try: %s", exc)
            for minute, fields in pending.items():
                self.local.unflushed[minute].update(fields)

    async def window(self) -> list[tuple[int, Counter]]:
        """The fleet's buckets; this replica's own when Redis cannot be read."""
        minutes = [m for m, _ in self.local.window()]
        try:
            pipe = self.client.pipeline(transaction=False)
            for minute in minutes:
                pipe.hgetall(self.key(minute))
            rows = await pipe.execute()
        except (RedisError, OSError):
            return self.local.window()
        out = []
        for minute, row in zip(minutes, rows):
            counts = Counter({k.decode(): float(v) for k, v in row.items()})
            counts.update(self.local.unflushed.get(minute, Counter()))   # not yet flushed
            out.append((minute, counts))
        return out

    async def run(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            await self.flush()
