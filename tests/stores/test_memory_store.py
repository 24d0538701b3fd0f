"""Memory-store specifics: the byte bound evicts least recently used entries first."""
from __future__ import annotations

from cachegate.stores.memory import ENTRY_OVERHEAD, MemoryStore


def entry_size(key: str, value: bytes) -> int:
    return len(key) + len(value) + ENTRY_OVERHEAD


async def test_byte_bound_evicts_least_recently_used():
    value = b"x" * 100
    store = MemoryStore(max_bytes=3 * entry_size("ns:a", value))
    for key in ("ns:a", "ns:b", "ns:c"):
        await store.set(key, value)
    await store.get("ns:a")                  # a is now the most recently used
    await store.set("ns:d", value)           # over the bound: b goes
    assert await store.get("ns:b") is None
    assert await store.get("ns:a") == value
    assert (await store.stats()).bytes <= store.max_bytes
    assert store.evictions == 1


async def test_value_larger_than_the_store_is_not_kept():
    store = MemoryStore(max_bytes=100)
    await store.set("ns:big", b"x" * 1000)
    assert await store.get("ns:big") is None
    assert (await store.stats()).bytes == 0


async def test_byte_accounting_returns_to_zero():
    store = MemoryStore(max_bytes=1 << 20)
    for i in range(50):
        await store.set(f"ns:{i}", b"v" * i, ttl_s=60)
    for i in range(0, 50, 2):
        await store.set(f"ns:{i}", b"w")     # overwrite half
    for i in range(50):
        await store.delete(f"ns:{i}")
    assert (await store.stats()).bytes == 0


async def test_expiry_uses_the_injected_clock():
    now = [1000.0]
    store = MemoryStore(clock=lambda: now[0])
    await store.set("ns:k", b"v", ttl_s=10)
    now[0] += 9.9
    assert await store.get("ns:k") == b"v"
    now[0] += 0.2
    assert await store.get("ns:k") is None
