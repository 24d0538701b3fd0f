"""Chunk streams: `first_answer` waits until a backend starts answering (so a caller learns it answers before
committing to it) and gives the whole answer back, its first chunk put back in front; the rest is closed
however the consumer leaves."""
from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from cachegate.backends.base import Chunk
from cachegate.errors import BackendError


async def first_answer(chunks: AsyncIterator[Chunk], empty: Callable[[], BackendError]) -> AsyncIterator[Chunk]:
    """`chunks` once its first chunk has come, that chunk included. A stream that ends before any chunk raises
    `empty()`; one that fails first is closed and its error raised."""
    try:
        first = await anext(chunks)
    except StopAsyncIteration:
        raise empty() from None
    except BaseException:
        await chunks.aclose()
        raise
    return prepend(first, chunks)


async def prepend(first: Chunk, rest: AsyncIterator[Chunk]) -> AsyncIterator[Chunk]:
    try:
        yield first
        async for chunk in rest:
            yield chunk
    finally:
        await rest.aclose()
