"""Keeping a replica's index in step with the shared entries: load at start, then follow the changes.

Every replica publishes what it stores and deletes on one Redis channel; the others apply it. Pub/sub
has no replay, so after any disconnect the follower resubscribes and re-syncs from a full scan.
"""
from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol

from cachegate.cache.semantic.entry import id_text, parse_id
from cachegate.stores.base import StoreUnavailable

log = logging.getLogger(__name__)


class Feed(Protocol):
    async def publish(self, channel: str, message: bytes) -> None: ...

    def subscribe(self, channel: str): ...


class Follower:
    """Publishes local changes and applies remote ones through `on_put(id)` / `on_delete(id)`."""

    def __init__(self, feed: Feed, channel: str, on_put: Callable[[int], Awaitable[None]],
                 on_delete: Callable[[int], None], resync: Callable[[], Awaitable[None]],
                 retry_s: float = 1.0) -> None:
        self.feed = feed
        self.channel = channel
        self.on_put = on_put
        self.on_delete = on_delete
        self.resync = resync
        self.retry_s = retry_s
        self.origin = uuid.uuid4().hex
        self.synced = asyncio.Event()
        self.task: asyncio.Task | None = None
        self.applied = 0
        self.resyncs = 0

    async def publish_put(self, entry_id: int) -> None:
        await self._publish({"op": "put", "ids": [id_text(entry_id)]})

    async def publish_delete(self, ids: list[int]) -> None:
        if ids:
            await self._publish({"op": "delete", "ids": [id_text(i) for i in ids]})

    async def start(self, timeout_s: float = 30.0) -> None:
        """Subscribe, load everything, then keep following in the background."""
        self.task = asyncio.create_task(self._run())
        try:
            await asyncio.wait_for(self.synced.wait(), timeout_s)
        except TimeoutError:
            log.warning("semantic entries not loaded within %.0fs; serving and syncing meanwhile", timeout_s)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass

    async def _publish(self, event: dict) -> None:
        try:
            await self.feed.publish(self.channel, json.dumps(event | {"origin": self.origin}).encode())
        except StoreUnavailable as exc:
            log.warning("could not publish a semantic %s: %s", event["op"], exc)

    async def _run(self) -> None:
        while True:
            try:
                await self._follow()
            except StoreUnavailable as exc:
                if self.synced.is_set():           # once per outage, not once per retry
                    log.warning("semantic follow lost its subscription, will re-sync: %s", exc)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("semantic follow failed, will re-sync")
            self.synced.clear()
            await asyncio.sleep(self.retry_s)

    async def _follow(self) -> None:
        async for raw in self.feed.subscribe(self.channel):
            if not self.synced.is_set():       # subscribed first, so nothing published from here is lost
                await self.resync()
                self.resyncs += 1
                self.synced.set()
            if raw is not None:
                await self._apply(json.loads(raw))

    async def _apply(self, event: dict) -> None:
        if event.get("origin") == self.origin:
            return
        for text in event.get("ids", []):
            entry_id = parse_id(text)
            if event["op"] == "put":
                await self.on_put(entry_id)
            elif event["op"] == "delete":
                self.on_delete(entry_id)
            self.applied += 1
