"""Building the semantic tier holds numpy's BLAS to one thread (its spinning workers took the embedder's
cores), and the tier's numpy work is still right on one thread."""
from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from cachegate.build_parts import build_semantic_store, build_semantic_tier
from cachegate.settings import load_settings


async def test_building_the_tier_sets_numpy_blas_to_one_thread():
    with threadpool_limits(limits=2, user_api="blas"):          # restored afterwards, for the other tests
        assert any(p["num_threads"] == 2 for p in threadpool_info() if p["user_api"] == "blas")
        settings = load_settings(env={})
        tier = build_semantic_tier(settings, build_semantic_store(settings))
        try:
            blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
            assert blas and all(p["num_threads"] == 1 for p in blas)
            a = np.random.default_rng(0).normal(size=(64, 384)).astype(np.float32)
            assert np.allclose(a @ a.T, np.einsum("ik,jk->ij", a, a), atol=1e-3)
        finally:
            await tier.close()
