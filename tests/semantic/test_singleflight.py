"""Single-flight: identical misses share one backend stream; errors reach every waiter."""
from __future__ import annotations

import asyncio

import pytest

from cachegate.backends.base import Chunk
from cachegate.cache.singleflight import SingleFlight
from cachegate.errors import BackendUnavailable


async def slow_stream(calls: list, fail: bool = False):
    calls.append(1)
    for word in ("a", "b", "c"):
        await asyncio.sleep(0.01)
        if fail:
            raise BackendUnavailable("down")
        yield Chunk(word, "stop" if word == "c" else None)


async def consume(stream) -> str:
    return "".join([c.text async for c in stream])


async def test_joiners_get_the_whole_answer_from_one_call():
    flights, calls = SingleFlight(), []
    streams = [flights.lead("k", slow_stream(calls)).subscribe()]
    for _ in range(9):
        streams.append(flights.join("k").subscribe())
    assert await asyncio.gather(*(consume(s) for s in streams)) == ["abc"] * 10
    assert calls == [1] and flights.joined == 9
    assert flights.join("k") is None           # landed: the next request goes to the cache or the backend


async def test_an_error_reaches_every_subscriber():
    flights, calls = SingleFlight(), []
    leader = flights.lead("k", slow_stream(calls, fail=True)).subscribe()
    joiner = flights.join("k").subscribe()
    for stream in (leader, joiner):
        with pytest.raises(BackendUnavailable):
            await consume(stream)


async def test_the_call_is_cancelled_when_every_subscriber_leaves():
    flights, calls = SingleFlight(), []
    flight = flights.lead("k", slow_stream(calls))
    stream = flight.subscribe()
    await anext(stream)
    await stream.aclose()
    await asyncio.sleep(0.05)
    assert flight.done and isinstance(flight.error, asyncio.CancelledError)
    assert len(flight.chunks) < 3 and calls == [1]
