"""Opening a tier's store from the settings: memory (bounded in bytes) or Redis, always guarded."""
from __future__ import annotations

from cachegate.settings import RedisSettings
from cachegate.stores.guarded import GuardedStore, StoreHealth
from cachegate.stores.memory import MemoryStore


def open_store(tier: str, kind: str, memory_bytes: int, redis: RedisSettings,
               health: StoreHealth | None = None, client=None) -> GuardedStore:
    """`health`: shared by the stores of one Redis (pass the same object), so one outage, and one
    recovery, is seen by every tier in it at once. `client`: the gateway's one Redis client (else the store
    opens its own)."""
    if kind == "redis":
        if not redis.url:
            raise ValueError(f"cache.{tier}.store is 'redis' but redis.url is not set")
        from cachegate.stores.redis import RedisStore
        store = RedisStore(redis.url, redis.key_prefix, redis.socket_timeout_s, client=client)
    else:
        store = MemoryStore(max_bytes=memory_bytes)
    return GuardedStore(store, retry_interval_s=redis.retry_interval_s, health=health)
