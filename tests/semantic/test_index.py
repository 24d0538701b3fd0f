"""The per-scope faiss index: exact while small, IVF with tombstones when large, rebuilt in the background."""
from __future__ import annotations

import numpy as np
import pytest

from cachegate.cache.semantic.catalog import Catalog, Meta
from cachegate.cache.semantic.index import IndexConfig, ScopeIndex


def unit(rng, n, d=32):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_flat_index_finds_the_nearest_and_forgets_removed(rng):
    index = ScopeIndex(IndexConfig(dim=32))
    vectors = unit(rng, 50)
    for i, v in enumerate(vectors):
        index.add(i + 100, v)
    assert index.search(vectors[7:8], 1)[0][0].id == 107
    assert index.remove(107)
    assert index.search(vectors[7:8], 1)[0][0].id != 107
    assert not index.remove(107)
    index.check()


def test_adding_an_existing_id_replaces_its_vector(rng):
    index = ScopeIndex(IndexConfig(dim=32))
    a, b = unit(rng, 2)
    index.add(1, a)
    index.add(1, b)
    assert len(index) == 1 and index.index.ntotal == 1
    assert index.search(b[None], 1)[0][0].score == pytest.approx(1.0, abs=1e-5)


def test_large_scope_switches_to_ivf_and_keeps_answers(rng):
    cfg = IndexConfig(dim=32, approximate_after=500, nprobe=64)
    index = ScopeIndex(cfg)
    vectors = unit(rng, 1200)
    index.add_many(list(range(1200)), vectors)
    assert index.wanted_kind() == "ivf"
    index.rebuild("ivf")
    assert index.kind == "ivf" and index.wanted_kind() is None
    found = [index.search(vectors[i:i + 1], 1)[0][0].id for i in range(0, 1200, 37)]
    assert found == list(range(0, 1200, 37))


def test_ivf_deletes_are_tombstones_excluded_from_search_then_compacted(rng):
    cfg = IndexConfig(dim=32, approximate_after=300, nprobe=64, tombstone_fraction=0.2)
    index = ScopeIndex(cfg)
    vectors = unit(rng, 800)
    index.add_many(list(range(800)), vectors)
    index.rebuild("ivf")
    for i in range(200):
        index.remove(i)
    assert len(index.tombstones) == 200 and index.index.ntotal == 800
    assert all(m.id >= 200 for m in index.search(vectors[:50], 3)[0])
    assert index.search(vectors[5:6], 1)[0][0].id != 5
    assert index.wanted_kind() == "ivf"          # 25% tombstones: rebuild
    index.rebuild("ivf")
    assert not index.tombstones and index.index.ntotal == 600
    index.check()


def test_readding_a_tombstoned_id_makes_it_findable_again(rng):
    index = ScopeIndex(IndexConfig(dim=32, approximate_after=100, nprobe=64))
    vectors = unit(rng, 300)
    index.add_many(list(range(300)), vectors)
    index.rebuild("ivf")
    index.remove(42)
    index.add(42, vectors[42])
    assert index.search(vectors[42:43], 1)[0][0].id == 42
    index.check()


def test_changes_during_a_rebuild_are_replayed_into_the_new_index(rng):
    index = ScopeIndex(IndexConfig(dim=32, approximate_after=100, nprobe=64))
    vectors = unit(rng, 400)
    index.add_many(list(range(300)), vectors[:300])
    original = index.rebuild

    def rebuild_with_traffic(kind):
        index.journal = []            # what `rebuild` sets up, then traffic arrives mid-build
        index.add(350, vectors[350])
        index.remove(3)
        index.journal = None
        original(kind)
    rebuild_with_traffic("ivf")
    assert 350 in index.live and 3 not in index.live
    assert index.search(vectors[350:351], 1)[0][0].id == 350


def test_catalog_rebuilds_in_the_background_and_keeps_scopes_apart(rng):
    catalog = Catalog(IndexConfig(dim=32, approximate_after=200, nprobe=64))
    vectors = unit(rng, 500)
    for i, v in enumerate(vectors):
        catalog.add(i, v, Meta("a" if i % 2 else "b", "default", "t", 0, 1e12, 10))
    catalog.wait_rebuilds()
    catalog.check()
    assert catalog.scopes["a"].kind == "ivf"
    assert {m.id % 2 for m in catalog.search("a", vectors[0], 5)} == {1}
    assert catalog.search("missing", vectors[0], 5) == []
    assert catalog.rebuilds >= 1
