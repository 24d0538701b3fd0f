"""Index layouts compared on search time alone: flat vs IVF, one index per scope vs one filtered index.

100k vectors over 100 scopes of 1k: searching a scope's own small index, or a shared index restricted
to the scope's ids with a faiss selector. And flat vs IVF on one 100k scope, with IVF's recall@1.
"""
from __future__ import annotations

import time

import faiss
import numpy as np

from cachegate.cache.semantic.index import IndexConfig, ScopeIndex
from loadtests.semantic_fill import _vectors, synthetic


def compare_layouts(stored: list[str], n: int = 100_000, scopes: int = 100, queries: int = 200) -> dict:
    real = np.stack([_vectors[t] for t in stored if t in _vectors][:20_000])
    data = synthetic(real, n, seed=7)
    rng = np.random.default_rng(3)
    q = synthetic(real, queries, seed=11)
    scope_of = rng.integers(0, scopes, n)
    ids = np.arange(n, dtype=np.int64)
    out = {}
    per_scope = [faiss.IndexIDMap2(faiss.IndexFlatIP(data.shape[1])) for _ in range(scopes)]
    for s, index in enumerate(per_scope):
        index.add_with_ids(data[scope_of == s], ids[scope_of == s])
    shared = faiss.IndexIDMap2(faiss.IndexFlatIP(data.shape[1]))
    shared.add_with_ids(data, ids)
    selectors = [faiss.IDSelectorBatch(ids[scope_of == s]) for s in range(scopes)]
    out[f"one flat index per scope ({scopes} x {n // scopes})"] = _time(
        lambda i: per_scope[i % scopes].search(q[i: i + 1], 8), queries)
    out[f"one flat index of {n}, ids filtered by scope"] = _time(
        lambda i: shared.search(q[i: i + 1], 8, params=faiss.SearchParameters(sel=selectors[i % scopes])), queries)
    flat, ivf = ScopeIndex(IndexConfig()), ScopeIndex(IndexConfig())
    flat.add_many(ids.tolist(), data)
    ivf.add_many(ids.tolist(), data)
    started = time.perf_counter()
    ivf.rebuild("ivf")
    out[f"IVF build over {n} (s)"] = round(time.perf_counter() - started, 2)
    out[f"flat, one scope of {n}"] = _time(lambda i: flat.search(q[i: i + 1], 8), queries)
    out[f"IVF nprobe {ivf.cfg.nprobe}, one scope of {n}"] = _time(lambda i: ivf.search(q[i: i + 1], 8), queries)
    truth = [flat.search(q[i: i + 1], 1)[0][0].id for i in range(queries)]
    got = [ivf.search(q[i: i + 1], 1)[0][0].id for i in range(queries)]
    out["IVF recall@1 vs flat"] = round(float(np.mean([a == b for a, b in zip(truth, got)])), 3)
    return out


def _time(fn, n: int) -> float:
    fn(0)
    started = time.perf_counter()
    for i in range(n):
        fn(i)
    return round((time.perf_counter() - started) / n * 1000, 3)
