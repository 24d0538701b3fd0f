"""Per-key rate limits: requests and tokens per minute over a sliding window (the current minute's
count plus the previous minute's, weighted by how much of it is still inside the window).

Checking and counting are one atomic step (a Lua script in Redis, a step without an `await` in memory),
so concurrent requests cannot all pass the check before any is counted. Each admitted request reserves
its tokens up front (the prompt's estimate plus `max_tokens`) and settles them when its answer ends,
however it ends: the usage the backend reported, what was produced when a stream was cut, nothing for a
cache hit or a failure. Counts live in Redis when configured, so every replica enforces one budget; when
Redis fails, that whole step is taken in memory instead (degraded, never stopped, never split).
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from cachegate.access.auth import Principal
from cachegate.errors import RateLimited

log = logging.getLogger(__name__)
WINDOW_S = 60.0
KEY_TTL_S = int(WINDOW_S * 3)

# KEYS: requests (previous, current minute), tokens (previous, current minute)
# ARGV: weight of the previous minute, request limit, token limit (0: none), tokens to reserve, key TTL
# Returns 0 (admitted and counted), 1 (over the request limit) or 2 (over the token limit).
ADMIT_LUA = """
local w = tonumber(ARGV[1])
local function used(previous, current)
  return tonumber(redis.call('GET', previous) or '0') * w + tonumber(redis.call('GET', current) or '0')
end
local rpm, tpm, reserve = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if tpm > 0 and used(KEYS[3], KEYS[4]) >= tpm then return 2 end
if rpm > 0 and used(KEYS[1], KEYS[2]) + 1 > rpm then return 1 end
if rpm > 0 then
  redis.call('INCRBYFLOAT', KEYS[2], 1)
  redis.call('EXPIRE', KEYS[2], ARGV[5])
end
if tpm > 0 and reserve > 0 then
  redis.call('INCRBYFLOAT', KEYS[4], reserve)
  redis.call('EXPIRE', KEYS[4], ARGV[5])
end
return 0
"""


@dataclass
class Reservation:
    """Tokens counted for a request up front, in the minute and the place (Redis or memory) they went."""
    principal: Principal
    tokens: int            # counted now: the prompt's estimate plus max_tokens (0 without a token limit)
    minute: int
    in_redis: bool
    prompt_tokens: int = 0   # the prompt's estimate, what a cut stream is charged beside its chunks
    settled: bool = False


class MemoryCounters:
    """Per (subject, minute) counts in this process; `admit` is atomic on the event loop (no await)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], float] = defaultdict(float)

    def admit(self, key_id: str, minute: int, weight: float, rpm: int, tpm: int, reserve: int) -> int:
        def used(subject: str) -> float:
            return self.counts.get((subject, minute - 1), 0.0) * weight + self.counts.get((subject, minute), 0.0)
        if tpm and used(f"{key_id}:tok") >= tpm:
            return 2
        if rpm and used(f"{key_id}:req") + 1 > rpm:
            return 1
        if rpm:
            self.add(f"{key_id}:req", minute, 1)
        if tpm and reserve:
            self.add(f"{key_id}:tok", minute, reserve)
        return 0

    def add(self, subject: str, minute: int, amount: float) -> None:
        self.counts[(subject, minute)] += amount
        for old in [k for k in self.counts if k[1] < minute - 2]:
            del self.counts[old]


class RedisCounters:
    def __init__(self, client: Redis, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.script = client.register_script(ADMIT_LUA)

    def key(self, subject: str, minute: int) -> str:
        key_id, _, kind = subject.partition(":")
        return f"{self.prefix}rl:{{{key_id}}}:{kind}:{minute}"      # one hash slot per API key (Cluster)

    async def admit(self, key_id: str, minute: int, weight: float, rpm: int, tpm: int, reserve: int) -> int:
        keys = [self.key(f"{key_id}:{kind}", m) for kind in ("req", "tok") for m in (minute - 1, minute)]
        return int(await self.script(keys=keys, args=[weight, rpm, tpm, reserve, KEY_TTL_S]))

    async def add(self, subject: str, minute: int, amount: float) -> None:
        pipe = self.client.pipeline(transaction=True)
        pipe.incrbyfloat(self.key(subject, minute), amount)
        pipe.expire(self.key(subject, minute), KEY_TTL_S)
        await pipe.execute()


class RateLimiter:
    def __init__(self, redis: Redis | None = None, prefix: str = "cachegate:",
                 clock: Callable[[], float] = time.time) -> None:
        self.local = MemoryCounters()
        self.shared = RedisCounters(redis, prefix) if redis is not None else None
        self.clock = clock
        self.redis_failures = 0

    async def admit(self, principal: Principal, prompt_tokens: int = 0, max_tokens: int = 0) -> Reservation:
        """Count this request and reserve its tokens, or refuse it (429) when its key is over a limit."""
        rpm, tpm = principal.requests_per_minute or 0, principal.tokens_per_minute or 0
        now = self.clock()
        minute, into = int(now // WINDOW_S), (now % WINDOW_S) / WINDOW_S
        reservation = Reservation(principal, prompt_tokens + max_tokens if tpm else 0, minute, in_redis=False,
                                  prompt_tokens=prompt_tokens)
        if not rpm and not tpm:
            return reservation
        verdict = None
        if self.shared is not None:
            try:
                verdict = await self.shared.admit(principal.key_id, minute, 1 - into, rpm, tpm, reservation.tokens)
                reservation.in_redis = True
            except (RedisError, OSError) as exc:
                self._redis_failed(exc)
        if verdict is None:
            verdict = self.local.admit(principal.key_id, minute, 1 - into, rpm, tpm, reservation.tokens)
        retry = WINDOW_S * (1 - into)
        if verdict == 2:
            raise RateLimited(f"Rate limit reached: {tpm} tokens per minute for this key", retry)
        if verdict == 1:
            raise RateLimited(f"Rate limit reached: {rpm} requests per minute for this key", retry)
        return reservation

    async def settle(self, reservation: Reservation, tokens: int) -> None:
        """Replace the reservation by the tokens really spent (0 for a hit or a failure); once."""
        if reservation.settled or not reservation.principal.tokens_per_minute:
            return
        reservation.settled = True
        delta = tokens - reservation.tokens
        if not delta:
            return
        subject = f"{reservation.principal.key_id}:tok"
        if not reservation.in_redis:
            self.local.add(subject, reservation.minute, delta)
            return
        try:
            await self.shared.add(subject, reservation.minute, delta)
        except (RedisError, OSError) as exc:     # the reservation stays counted: over, never under
            self._redis_failed(exc)

    def _redis_failed(self, exc: BaseException) -> None:
        self.redis_failures += 1
        log.warning("rate limit counters failed in redis, counting this step in memory: %s", exc)
