"""Faiss index of one scope: exact (flat, ids removable) while small, IVF when large.

The IVF index marks deletions as tombstones (excluded at search) and is rebuilt in the background when
tombstones pile up, when it outgrows what it was trained on, or when it shrinks back to flat size.
Searches and mutations hold `lock`; a rebuild builds outside it and replays what happened meanwhile.
"""
from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from typing import NamedTuple

import faiss
import numpy as np


@dataclass(frozen=True)
class IndexConfig:
    dim: int = 384
    approximate_after: int = 20_000   # a scope larger than this gets an IVF index
    nprobe: int = 32
    tombstone_fraction: float = 0.2   # rebuild when this share of the IVF index is deleted
    regrow_factor: float = 4.0        # rebuild (retrain) when the live count grows this much past training
    train_niter: int = 10


class Match(NamedTuple):
    id: int
    score: float


def _ids(ids: list[int]) -> np.ndarray:
    return np.asarray(ids, dtype=np.int64)


def nlist_for(n: int) -> int:
    """About 2·sqrt(n) lists (a power of two), with at least 39 training points per list."""
    return int(max(1, min(8192, n // 39, max(64, 2 ** round(math.log2(2 * math.sqrt(max(n, 1))))))))


def build_flat(dim: int, ids: np.ndarray, vectors: np.ndarray) -> faiss.Index:
    index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
    if len(ids):
        index.add_with_ids(vectors, ids)
    return index


def build_ivf(cfg: IndexConfig, ids: np.ndarray, vectors: np.ndarray) -> faiss.Index:
    nlist = nlist_for(len(ids))
    quantizer = faiss.IndexFlatIP(cfg.dim)
    index = faiss.IndexIVFFlat(quantizer, cfg.dim, nlist, faiss.METRIC_INNER_PRODUCT)
    index.cp.niter = cfg.train_niter
    sample = np.random.default_rng(0).permutation(len(ids))[: 40 * nlist]
    index.train(vectors[sample])
    index.set_direct_map_type(faiss.DirectMap.Hashtable)
    index.add_with_ids(vectors, ids)
    index.nprobe = cfg.nprobe   # (faiss's wrapper keeps `quantizer` alive with the index)
    return index


class ScopeIndex:
    def __init__(self, cfg: IndexConfig) -> None:
        self.cfg = cfg
        self.lock = threading.Lock()
        self.index = build_flat(cfg.dim, _ids([]), np.zeros((0, cfg.dim), np.float32))
        self.kind = "flat"
        self.live: set[int] = set()
        self.tombstones: set[int] = set()
        self.trained_on = 0
        self.journal: list[tuple[str, int, np.ndarray | None]] | None = None   # ops during a rebuild
        self._selector: tuple[faiss.SearchParametersIVF, object] | None = None

    def __len__(self) -> int:
        return len(self.live)

    def add(self, entry_id: int, vector: np.ndarray) -> None:
        with self.lock:
            self._add(self.index, self.kind, entry_id, vector)
            if self.journal is not None:
                self.journal.append(("add", entry_id, vector))

    def add_many(self, ids: list[int], vectors: np.ndarray) -> None:
        """Bulk insert of ids this index does not hold yet (loading, benchmarks)."""
        with self.lock:
            assert not self.live.intersection(ids) and not self.tombstones.intersection(ids), "ids already held"
            self.index.add_with_ids(vectors.astype(np.float32), _ids(ids))
            self.live.update(ids)
            if self.journal is not None:
                self.journal += [("add", i, v) for i, v in zip(ids, vectors)]

    def remove(self, entry_id: int) -> bool:
        with self.lock:
            if entry_id not in self.live:
                return False
            self.live.discard(entry_id)
            if self.kind == "flat":
                self.index.remove_ids(faiss.IDSelectorArray(_ids([entry_id])))
            else:
                self.tombstones.add(entry_id)
                self._selector = None
            if self.journal is not None:
                self.journal.append(("remove", entry_id, None))
            return True

    def search(self, vectors: np.ndarray, k: int) -> list[list[Match]]:
        # One OpenMP thread per search (this thread's setting): a single-query search split across busy
        # cores spends its time waiting (measured 45 ms vs 1.5 ms at 11k entries on 2 shared cores).
        faiss.omp_set_num_threads(1)
        with self.lock:
            if not self.live:
                return [[] for _ in vectors]
            k = min(k, len(self.live))
            if self.kind == "flat":
                scores, ids = self.index.search(vectors, k)
            else:
                scores, ids = self.index.search(vectors, k, params=self._params())
        return [[Match(int(i), float(s)) for s, i in zip(row_s, row_i) if i >= 0] for row_s, row_i in zip(scores, ids)]

    def vectors_of(self, ids: list[int]) -> np.ndarray:
        with self.lock:
            return self.index.reconstruct_batch(_ids(ids))

    def wanted_kind(self) -> str | None:
        """The kind a rebuild should produce now, or None when the current index is fine."""
        n = len(self.live)
        if self.kind == "flat":
            return "ivf" if n > self.cfg.approximate_after else None
        if n < self.cfg.approximate_after // 2:
            return "flat"
        if len(self.tombstones) > self.cfg.tombstone_fraction * max(1, self.index.ntotal):
            return "ivf"
        if n > self.cfg.regrow_factor * max(1, self.trained_on):
            return "ivf"
        return None

    def rebuild(self, kind: str) -> None:
        """Build a fresh index of `kind` from the live vectors (blocking: run it off the event loop)."""
        faiss.omp_set_num_threads(os.cpu_count() or 1)    # training may use every core of this thread
        with self.lock:
            ids = _ids(sorted(self.live))
            vectors = self.index.reconstruct_batch(ids) if len(ids) else np.zeros((0, self.cfg.dim), np.float32)
            self.journal = []
        fresh = build_ivf(self.cfg, ids, vectors) if kind == "ivf" else build_flat(self.cfg.dim, ids, vectors)
        with self.lock:
            live = set(ids.tolist())
            for op, entry_id, vector in self.journal:
                if op == "add":
                    self._add(fresh, kind, entry_id, vector, live)
                elif entry_id in live:
                    live.discard(entry_id)
                    fresh.remove_ids(faiss.IDSelectorArray(_ids([entry_id])))
            self.index, self.kind, self.journal = fresh, kind, None
            self.tombstones, self._selector = set(), None
            self.trained_on = len(ids) if kind == "ivf" else 0
            assert live == self.live, "rebuilt index disagrees with the live ids"
            self.check()

    def check(self) -> None:
        """Invariant: every vector in faiss is live or tombstoned, and every live id has a vector."""
        assert self.index.ntotal == len(self.live) + len(self.tombstones), (
            f"index holds {self.index.ntotal}, live {len(self.live)} + tombstones {len(self.tombstones)}")

    def _add(self, index: faiss.Index, kind: str, entry_id: int, vector: np.ndarray,
             live: set[int] | None = None) -> None:
        live = self.live if live is None else live
        if entry_id in live or (index is self.index and entry_id in self.tombstones):
            index.remove_ids(faiss.IDSelectorArray(_ids([entry_id])))   # overwrite: drop the old vector
            if index is self.index and entry_id in self.tombstones:
                self.tombstones.discard(entry_id)
                self._selector = None
        index.add_with_ids(vector.reshape(1, -1).astype(np.float32), _ids([entry_id]))
        live.add(entry_id)

    def _params(self) -> faiss.SearchParametersIVF:
        if self._selector is None:
            params = faiss.SearchParametersIVF(nprobe=self.cfg.nprobe)
            keep = None
            if self.tombstones:
                batch = faiss.IDSelectorBatch(_ids(sorted(self.tombstones)))
                keep = (batch, faiss.IDSelectorNot(batch))
                params.sel = keep[1]
            self._selector = (params, keep)
        return self._selector[0]
