"""The store interface shared by every cache tier: async get / set with TTL / delete / scan by namespace.

Keys are `namespace:rest`. The memory and Redis stores pass the same test suite.
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol


class StoreUnavailable(Exception):
    """The store cannot be reached now; callers degrade (skip the tier) instead of failing."""


@dataclass
class StoreStats:
    entries: int
    bytes: int


class Store(Protocol):
    name: str

    async def get(self, key: str) -> bytes | None: ...

    async def get_many(self, keys: list[str]) -> list[bytes | None]:
        """The values of `keys` in order (None where absent), in one call: one round trip to Redis (MGET)."""
        ...

    async def set(self, key: str, value: bytes, ttl_s: float | None = None) -> None: ...

    async def delete(self, key: str) -> bool: ...

    def scan(self, namespace: str) -> AsyncIterator[str]:
        """Every live key under `namespace:`, in no particular order."""
        ...

    async def stats(self) -> StoreStats: ...

    async def ping(self) -> bool: ...

    async def probe(self) -> None:
        """Raise `StoreUnavailable` unless the store takes a write now."""
        ...

    async def close(self) -> None: ...


def namespaced(namespace: str, key: str) -> str:
    assert ":" not in namespace, "namespaces are single path segments"
    return f"{namespace}:{key}"
