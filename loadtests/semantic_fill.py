"""Filling a semantic tier for the benchmark: real dev-data questions first, then synthetic neighbours.

Synthetic vectors mix two real question embeddings plus noise, so they sit on the same manifold the
index clusters (random vectors would make an IVF index look better than it is).
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

from cachegate.backends.base import BackendRequest, Sampling, Usage
from cachegate.cache.answer import CachedAnswer
from cachegate.cache.semantic.catalog import Meta
from cachegate.cache.semantic.context import Probe
from cachegate.cache.semantic.entry import SemanticEntry
from cachegate.cache.semantic.scope import scope_of

DATA_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "semantic"
_vectors: dict[str, np.ndarray] = {}


def questions(folder: Path) -> tuple[list[str], list[str]]:
    """(questions to store, questions to look up): qqp's question1s and question2s, else made-up ones."""
    path = folder / "qqp_dev.csv"
    if not path.exists():
        made = [f"how do I configure feature {i} of product {i % 97}?" for i in range(5000)]
        return made, [q.replace("how do I", "how can I") for q in made]
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return list(dict.fromkeys(r["question1"] for r in rows)), list(dict.fromkeys(r["question2"] for r in rows))


def request(question: str) -> BackendRequest:
    return BackendRequest(model="bench", params=Sampling(), messages=[{"role": "user", "content": question}])


def make_tier(max_batch: int, precision: str = "auto", threads: int = 1, policy: str = "packaged"):
    from cachegate.build_parts import build_semantic_store, build_semantic_tier
    from cachegate.settings import load_settings
    embedder = {"max_batch": max_batch, "cache_size": 0, "precision": precision, "threads": threads}
    settings = load_settings(env={}, overrides={"cache": {"semantic": {
        "max_entries": 10 ** 8, "max_bytes": 1 << 40, "embedder": embedder, "policy": policy}}})
    return build_semantic_tier(settings, build_semantic_store(settings))


def use_embedding_memo(folder: str, precision: str) -> None:
    """Take the stored questions' vectors from an embedding memo (`cachegate eval --embedding-cache`)."""
    from cachegate.cache.semantic.datasets import EmbeddingMemo
    from cachegate.cache.semantic.embedder import PACKAGED, resolve_precision
    _vectors.update(EmbeddingMemo(folder, f"{PACKAGED}@{resolve_precision(precision)}").load())


def real_vectors(tier, texts: list[str]) -> np.ndarray:
    missing = [t for t in texts if t not in _vectors]
    if missing:
        from cachegate.cache.semantic.datasets import encode_with_progress
        _vectors.update(zip(missing, encode_with_progress(tier.embedder, missing)))
    return np.stack([_vectors[t] for t in texts])


def synthetic(real: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, len(real), n), rng.integers(0, len(real), n)
    w = rng.uniform(0.3, 0.7, (n, 1)).astype(np.float32)
    v = w * real[a] + (1 - w) * real[b] + rng.normal(0, 0.02, (n, real.shape[1])).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


async def fill(tier, size: int, stored: list[str], chunk: int = 50_000, like: BackendRequest | None = None) -> dict:
    """Put `size` entries in the tier's store and catalog, in the scope of `like` (a request of the same
    model, system prompt and parameters); build the IVF index when the size calls for it."""
    texts = stored[: min(size, len(stored))]
    real = real_vectors(tier, texts)
    scope = scope_of("chat", like or request(texts[0]), "default")
    rng = np.random.default_rng(1)
    now = time.time()
    for start in range(0, size, chunk):
        n = min(chunk, size - start)
        vectors = np.concatenate([real[start: start + n], synthetic(real, n - len(real[start: start + n]), start)])
        ids = [int(i) for i in rng.integers(1, 1 << 62, n)]
        metas = []
        for j, (entry_id, v) in enumerate(zip(ids, vectors)):
            q = texts[start + j] if start + j < len(texts) else f"synthetic question {start + j}"
            entry = SemanticEntry(entry_id, scope, "default", "default", q, "", v, None,
                                  CachedAnswer(f"answer {start + j}", "stop", "bench", Usage(5, 5)), now + 3600, now)
            raw = entry.to_bytes()
            await tier.entries.store.set(tier.entries.key(entry_id), raw, 3600)
            metas.append(Meta(scope, "default", "default", now, now + 3600, len(raw), last_used=now))
        index = tier.catalog.add_many(ids, vectors, metas)
    info: dict = {}
    kind = index.wanted_kind()
    if kind is not None:
        started = time.perf_counter()
        index.rebuild(kind)
        info["index_build_s"] = round(time.perf_counter() - started, 1)
    return info


def probe_of(question: str) -> Probe:
    return Probe(question)
