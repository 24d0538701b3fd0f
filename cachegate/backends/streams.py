"""Helpers for chunk streams: putting back a first chunk that was read ahead (to learn that a backend
answers before committing to it) and closing the rest however the consumer leaves."""
from __future__ import annotations

from collections.abc import AsyncIterator

from cachegate.backends.base import Chunk


async def prepend(first: Chunk, rest: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
    try:
        yield first
        async for chunk in rest:
            yield chunk
    finally:
        await rest.aclose()
