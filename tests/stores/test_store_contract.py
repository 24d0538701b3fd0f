"""One suite, two stores: the memory store and a real Redis honour the same contract."""
from __future__ import annotations

import asyncio
import uuid

import pytest

from cachegate.stores.memory import MemoryStore
from cachegate.stores.redis import RedisStore


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request):
    if request.param == "memory":
        s = MemoryStore(max_bytes=1 << 20)
    else:
        s = RedisStore(request.getfixturevalue("redis_url"), key_prefix=f"test-{uuid.uuid4().hex}:")
    yield s
    async for key in s.scan("ns"):
        await s.delete(key)
    await s.close()


async def test_get_of_missing_key_is_none(store):
    assert await store.get("ns:absent") is None


async def test_set_then_get_returns_the_bytes(store):
    await store.set("ns:k", b"\x00value\xff", ttl_s=60)
    assert await store.get("ns:k") == b"\x00value\xff"


async def test_set_overwrites(store):
    await store.set("ns:k", b"one")
    await store.set("ns:k", b"two")
    assert await store.get("ns:k") == b"two"


async def test_delete_reports_whether_it_removed(store):
    await store.set("ns:k", b"v")
    assert await store.delete("ns:k") is True
    assert await store.delete("ns:k") is False
    assert await store.get("ns:k") is None


async def test_entries_expire_after_their_ttl(store):
    await store.set("ns:short", b"v", ttl_s=0.15)
    await store.set("ns:long", b"v", ttl_s=60)
    await asyncio.sleep(0.3)
    assert await store.get("ns:short") is None
    assert await store.get("ns:long") == b"v"


async def test_scan_lists_only_its_namespace(store):
    await store.set("ns:a", b"1")
    await store.set("ns:b", b"2")
    await store.set("other:c", b"3")
    await store.set("ns2:d", b"4")
    assert sorted([k async for k in store.scan("ns")]) == ["ns:a", "ns:b"]
    for key in ("other:c", "ns2:d"):
        await store.delete(key)


async def test_scan_skips_expired_entries(store):
    await store.set("ns:gone", b"v", ttl_s=0.1)
    await store.set("ns:kept", b"v")
    await asyncio.sleep(0.25)
    assert [k async for k in store.scan("ns")] == ["ns:kept"]


async def test_glob_characters_in_keys_are_literal(store):
    await store.set("ns:a*b", b"1")
    await store.set("ns:[x]", b"2")
    assert sorted([k async for k in store.scan("ns")]) == ["ns:[x]", "ns:a*b"]
    assert await store.get("ns:a*b") == b"1"


async def test_stats_count_entries(store):
    before = (await store.stats()).entries
    await store.set("ns:a", b"1")
    await store.set("ns:b", b"2")
    stats = await store.stats()
    assert stats.entries == before + 2
    assert stats.bytes > 0


async def test_ping(store):
    assert await store.ping() is True


async def test_get_many_returns_values_in_order_with_none_for_missing_and_expired(store):
    await store.set("ns:a", b"1", ttl_s=60)
    await store.set("ns:b", b"2", ttl_s=0.1)
    await store.set("ns:c", b"3")
    await asyncio.sleep(0.25)
    assert await store.get_many(["ns:c", "ns:absent", "ns:b", "ns:a"]) == [b"3", None, None, b"1"]
    assert await store.get_many([]) == []
