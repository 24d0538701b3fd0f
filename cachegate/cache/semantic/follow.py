"""Keeping a replica's index in step with the shared entries: load at start, then follow the changes.

Every replica publishes what it stores and deletes on one Redis channel; the others apply it. Pub/sub
has no replay, so after any disconnect the follower resubscribes and re-syncs from a full scan
(`CatalogSync.load`). Expired entries leave the catalog by a periodic sweep (the store expires them by itself).
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol

from cachegate.cache.semantic.catalog import Catalog
from cachegate.cache.semantic.entries import EntryStore
from cachegate.cache.semantic.entry import SemanticEntry, id_text, parse_id
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


class CatalogSync:
    """The catalog made to match the store (at start and after every lost subscription), entries other replicas
    stored added one by one, and expired ones swept out."""

    def __init__(self, entries: EntryStore, catalog: Catalog, remember: Callable[[SemanticEntry], None]) -> None:
        self.entries = entries
        self.catalog = catalog
        self.remember = remember

    async def load(self) -> None:
        """Make the catalog match the store: add what it lacks, drop what the store no longer has."""
        seen: set[int] = set()
        batch: list[int] = []
        async for i in self.entries.ids():
            seen.add(i)
            if i not in self.catalog:
                batch.append(i)
            if len(batch) >= 256:
                await self._load_batch(batch)
                batch = []
        await self._load_batch(batch)
        if not self.entries.reachable:
            raise StoreUnavailable("the entry store went away during a re-sync")
        for stale in [i for i in list(self.catalog.meta) if i not in seen]:
            self.catalog.remove(stale)

    async def _load_batch(self, ids: list[int]) -> None:
        for entry in filter(None, await self.entries.get_many(ids)):
            if entry.expires_at > time.time():
                self.remember(entry)

    async def follow_put(self, entry_id: int) -> None:
        entry = await self.entries.get(entry_id)
        if entry is not None:
            self.remember(entry)

    def sweep(self) -> int:
        """Drop expired entries from the catalog (the store expires them by itself)."""
        expired = self.catalog.expired()
        for i in expired:
            self.catalog.remove(i)
        return len(expired)

    async def sweep_forever(self, interval_s: float) -> None:
        asyncio.current_task().set_name("sweeper")
        while True:
            await asyncio.sleep(interval_s)
            self.sweep()
