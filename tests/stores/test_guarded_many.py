"""A batched read through the guard: an unreachable Redis answers every key with None and marks the store
down, instead of raising into the lookup."""
from __future__ import annotations

import socket

from cachegate.stores.guarded import GuardedStore
from cachegate.stores.memory import MemoryStore
from cachegate.stores.redis import RedisStore


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_get_many_of_an_unreachable_redis_is_all_none_and_marks_it_down():
    store = GuardedStore(RedisStore(f"redis://127.0.0.1:{closed_port()}/0", socket_timeout_s=0.2))
    try:
        assert await store.get_many(["a", "b", "c"]) == [None, None, None]
        assert not store.healthy and store.failures == 1
    finally:
        await store.close()


async def test_get_many_through_the_guard_reads_the_store():
    store = GuardedStore(MemoryStore())
    await store.set("ns:a", b"1")
    assert await store.get_many(["ns:a", "ns:b"]) == [b"1", None]
    assert store.healthy
