"""Single-flight: identical misses in flight at the same time share one backend call.

The first request leads: a task pumps the backend stream into a `Flight`, which replays every chunk to
each subscriber (late joiners from the start). The call is cancelled when its last subscriber leaves.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from cachegate.backends.base import Chunk


class Flight:
    def __init__(self, key: str, source: AsyncIterator[Chunk]) -> None:
        self.key = key
        self.chunks: list[Chunk] = []
        self.error: BaseException | None = None
        self.done = False
        self.subscribers = 0
        self.changed = asyncio.Event()
        self.task = asyncio.create_task(self._pump(source))

    async def subscribe(self) -> AsyncIterator[Chunk]:
        self.subscribers += 1
        i = 0
        try:
            while True:
                while i < len(self.chunks):
                    yield self.chunks[i]
                    i += 1
                if self.done:
                    if self.error is not None:
                        raise self.error
                    return
                self.changed.clear()
                await self.changed.wait()
        finally:
            self.subscribers -= 1
            if self.subscribers == 0 and not self.done:
                self.task.cancel()

    async def _pump(self, source: AsyncIterator[Chunk]) -> None:
        try:
            async for chunk in source:
                self.chunks.append(chunk)
                self.changed.set()
        except asyncio.CancelledError:
            self.error = asyncio.CancelledError()
        except BaseException as exc:  # noqa: BLE001 - handed to every subscriber
            self.error = exc
        finally:
            self.done = True
            self.changed.set()
            await source.aclose()


class SingleFlight:
    def __init__(self) -> None:
        self.flights: dict[str, Flight] = {}
        self.calls = 0
        self.joined = 0

    def join(self, key: str) -> Flight | None:
        flight = self.flights.get(key)
        if flight is None or flight.done:
            return None
        self.joined += 1
        return flight

    def lead(self, key: str, source: AsyncIterator[Chunk]) -> Flight:
        """`source` is the whole answer as the leader's request would have it (stored as it finishes)."""
        flight = Flight(key, source)
        self.calls += 1
        self.flights[key] = flight
        flight.task.add_done_callback(lambda _: self._land(flight))
        return flight

    def _land(self, flight: Flight) -> None:
        if self.flights.get(flight.key) is flight:
            del self.flights[flight.key]
