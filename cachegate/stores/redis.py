"""Redis store over `redis.asyncio`: entries shared by every gateway replica, TTL kept by Redis.

Every Redis failure (unreachable, a timeout, OOM under `noeviction`, a read-only replica, any error
reply) surfaces as `StoreUnavailable`; the tier above decides to skip the store. The client reconnects
by itself, so service resumes when Redis is back.
"""
from __future__ import annotations

from collections.abc import AsyncIterator

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from cachegate.stores.base import StoreStats, StoreUnavailable

_FAILED = (RedisError, OSError)        # unreachable, timeouts, and error replies: OOM, READONLY, WRONGTYPE...
PROBE_KEY = "probe"


def connect(url: str, socket_timeout_s: float = 0.5) -> aioredis.Redis:
    """The one way cachegate opens Redis: short timeouts (a slow Redis counts as down for that call), and
    one retry on a fresh connection, since after a Redis restart the pooled connections are dead."""
    return aioredis.Redis.from_url(url, socket_timeout=socket_timeout_s, socket_connect_timeout=socket_timeout_s,
                                   health_check_interval=0, retry_on_timeout=False, retry=Retry(NoBackoff(), 1),
                                   retry_on_error=[RedisConnectionError])


class RedisStore:
    name = "redis"

    def __init__(self, url: str | None = None, key_prefix: str = "cachegate:", socket_timeout_s: float = 0.5,
                 client: aioredis.Redis | None = None) -> None:
        """On the gateway's one `client` when given (its owner closes it), else on a client of its own."""
        self.prefix = key_prefix
        self.owns_client = client is None
        self.client = client if client is not None else connect(url, socket_timeout_s)

    async def get(self, key: str) -> bytes | None:
        return await self._call(self.client.get, self.prefix + key)

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        if not keys:
            return []
        return list(await self._call(self.client.mget, [self.prefix + k for k in keys]))

    async def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None:
        px = None if ttl_s is None else max(1, int(ttl_s * 1000))
        await self._call(self.client.set, self.prefix + key, value, px=px)

    async def delete(self, key: str) -> bool:
        return bool(await self._call(self.client.delete, self.prefix + key))

    async def scan(self, namespace: str) -> AsyncIterator[str]:
        pattern = _escape_glob(f"{self.prefix}{namespace}:") + "*"
        try:
            async for raw in self.client.scan_iter(match=pattern, count=500):
                yield raw.decode()[len(self.prefix):]
        except _FAILED as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def stats(self) -> StoreStats:
        """Entries under this gateway's prefix (a SCAN: for dashboards, not the hot path) and Redis memory."""
        pattern = _escape_glob(self.prefix) + "*"
        try:
            entries = 0
            async for _ in self.client.scan_iter(match=pattern, count=1000):
                entries += 1
        except _FAILED as exc:
            raise StoreUnavailable(str(exc)) from exc
        info = await self._call(self.client.info, "memory")
        return StoreStats(entries=entries, bytes=int(info.get("used_memory", 0)))

    async def publish(self, channel: str, message: bytes) -> None:
        """Send `message` to every replica subscribed to `channel` (fire and forget: no replay)."""
        await self._call(self.client.publish, self.prefix + channel, message)

    async def subscribe(self, channel: str, poll_s: float = 0.2) -> AsyncIterator[bytes | None]:
        """Messages on `channel` from the moment of subscribing; None every `poll_s` while idle (a heartbeat
        the caller can stop on). Raises `StoreUnavailable` when the connection is lost."""
        pubsub = self.client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self.prefix + channel)
            while True:
                message = await pubsub.get_message(timeout=poll_s)
                yield None if message is None else message["data"]
        except _FAILED as exc:
            raise StoreUnavailable(f"redis subscription: {exc}") from exc
        finally:
            try:
                await pubsub.aclose()
            except _FAILED:
                pass

    async def ping(self) -> bool:
        try:
            return bool(await self.client.ping())
        except _FAILED:
            return False

    async def probe(self) -> None:
        """A small write with a short TTL: raises `StoreUnavailable` unless Redis takes writes."""
        await self._call(self.client.set, self.prefix + PROBE_KEY, b"1", px=5000)

    async def close(self) -> None:
        if self.owns_client:
            await self.client.aclose()

    async def _call(self, fn, *args, **kwargs):
        try:
            return await fn(*args, **kwargs)
        except _FAILED as exc:
            raise StoreUnavailable(f"redis: {type(exc).__name__}: {exc}") from exc


def _escape_glob(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)
