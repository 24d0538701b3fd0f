"""What this process knows of the semantic entries: one faiss index per scope, plus each entry's metadata.

The catalog mirrors the entry store (loaded at start, then following inserts and deletes), so lookups
never scan the store. Rebuilds of large scopes run on a background thread, one at a time.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from cachegate.cache.semantic.index import IndexConfig, Match, ScopeIndex

log = logging.getLogger(__name__)


@dataclass
class Meta:
    scope: str
    namespace: str
    tenant: str
    created: float
    expires_at: float
    size: int
    hits: int = 0
    last_used: float = 0.0


class Catalog:
    def __init__(self, cfg: IndexConfig) -> None:
        self.cfg = cfg
        self.scopes: dict[str, ScopeIndex] = {}
        self.meta: dict[int, Meta] = {}
        self.bytes = 0
        self.lock = threading.Lock()
        self.rebuilder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-rebuild")
        self.rebuilding: Future | None = None
        self.queued: dict[int, ScopeIndex] = {}
        self.working = False   # the rebuild thread is draining `queued` (guarded by `lock`)
        self.rebuilds = 0

    def __len__(self) -> int:
        return len(self.meta)

    def __contains__(self, entry_id: int) -> bool:
        return entry_id in self.meta

    def add(self, entry_id: int, vector: np.ndarray, meta: Meta) -> None:
        with self.lock:
            old = self.meta.get(entry_id)
            if old is not None and old.scope != meta.scope:
                self._drop(entry_id)
            elif old is not None:
                self.bytes -= old.size
            self.meta[entry_id] = meta
            self.bytes += meta.size
            index = self.scopes.setdefault(meta.scope, ScopeIndex(self.cfg))
        index.add(entry_id, vector)
        self.maybe_rebuild(index)

    def add_many(self, ids: list[int], vectors: np.ndarray, metas: list[Meta]) -> ScopeIndex:
        """Bulk insert of new ids, all of one scope (loading, benchmarks); returns the scope's index."""
        with self.lock:
            for i, meta in zip(ids, metas):
                assert meta.scope == metas[0].scope and i not in self.meta, "bulk adds are new ids of one scope"
                self.meta[i] = meta
                self.bytes += meta.size
            index = self.scopes.setdefault(metas[0].scope, ScopeIndex(self.cfg))
        index.add_many(ids, vectors)
        return index

    def remove(self, entry_id: int) -> Meta | None:
        with self.lock:
            meta = self._drop(entry_id)
        if meta is not None and meta.scope in self.scopes:
            self.maybe_rebuild(self.scopes[meta.scope])
        return meta

    def search(self, scope: str, vector: np.ndarray, k: int) -> list[Match]:
        index = self.scopes.get(scope)
        if index is None:
            return []
        return index.search(vector.reshape(1, -1), k)[0]

    def ids_where(self, **fields: str) -> list[int]:
        with self.lock:
            return [i for i, m in self.meta.items() if all(getattr(m, k) == v for k, v in fields.items())]

    def expired(self, now: float | None = None) -> list[int]:
        now = now or time.time()
        with self.lock:
            return [i for i, m in self.meta.items() if m.expires_at <= now]

    def touch(self, entry_id: int) -> None:
        meta = self.meta.get(entry_id)
        if meta is not None:
            meta.hits += 1
            meta.last_used = time.time()

    def maybe_rebuild(self, index: ScopeIndex) -> None:
        """Queue a rebuild of `index` if it wants one; one background thread works through the queue."""
        if index.wanted_kind() is None:
            return
        with self.lock:
            self.queued[id(index)] = index
            if not self.working:
                self.working = True
                self.rebuilding = self.rebuilder.submit(self._work_queue)

    def wait_rebuilds(self) -> None:
        while self.rebuilding is not None and not self.rebuilding.done():
            self.rebuilding.result()

    def check(self) -> None:
        """Invariant: the indexes hold exactly the ids the metadata knows, each in its own scope."""
        with self.lock:
            for scope, index in self.scopes.items():
                index.check()
                assert all(self.meta[i].scope == scope for i in index.live), f"scope {scope} holds strays"
            assert sum(len(ix) for ix in self.scopes.values()) == len(self.meta), "index/metadata disagree"

    def close(self) -> None:
        self.rebuilder.shutdown(wait=False, cancel_futures=True)

    def _work_queue(self) -> None:
        while True:
            with self.lock:
                if not self.queued:
                    self.working = False
                    return
                index = self.queued.pop(next(iter(self.queued)))
            kind = index.wanted_kind()
            if kind is not None:
                self._rebuild(index, kind)

    def _rebuild(self, index: ScopeIndex, kind: str) -> None:
        started = time.perf_counter()
        try:
            index.rebuild(kind)
        except Exception:
            log.exception("rebuilding a semantic index failed; the old one keeps serving")
            return
        self.rebuilds += 1
        log.info("rebuilt a scope index as %s over %d entries in %.1fs", kind, len(index),
                 time.perf_counter() - started)

    def _drop(self, entry_id: int) -> Meta | None:
        meta = self.meta.pop(entry_id, None)
        if meta is None:
            return None
        self.bytes -= meta.size
        index = self.scopes.get(meta.scope)
        if index is not None:
            index.remove(entry_id)
            if not len(index) and index.journal is None and index.kind == "flat":
                del self.scopes[meta.scope]
        return meta
