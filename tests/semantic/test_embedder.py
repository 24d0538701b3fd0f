"""The embedder: sub-batches of similar length keep row order, and bfloat16 (where the CPU has it) agrees
with float32."""
from __future__ import annotations

import numpy as np
import pytest

from cachegate.cache.semantic.embedder import Embedder, length_buckets, native_bf16, resolve_precision


def test_length_buckets_group_similar_lengths_and_cover_every_row():
    texts = ["hi?", "a" * 500, "what now?", "b" * 40, "c" * 45, "d" * 520]
    groups = length_buckets(texts, max_batch=2)
    assert sorted(r for g in groups for r in g) == list(range(len(texts)))
    assert all(len(g) <= 2 for g in groups)
    assert [1, 5] in groups or [5, 1] in groups          # the two long ones share a batch, apart from the rest


def test_mixed_lengths_encode_like_one_at_a_time():
    embedder = Embedder(precision="float32")
    texts = ["How do I reset my password?", "user: " + "tell me about Paris. " * 40, "Who wrote Hamlet?"]
    together = embedder.encode(texts)
    alone = np.stack([embedder.encode([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


@pytest.mark.skipif(not native_bf16(), reason="this CPU has no native bfloat16")
def test_bfloat16_agrees_with_float32():
    texts = ["How do I reset my password?", "What is the capital of France?", "Is the store open on Sunday?"]
    a, b = Embedder(precision="float32").encode(texts), Embedder(precision="bfloat16").encode(texts)
    assert np.min(np.sum(a * b, axis=1)) > 0.999
    assert resolve_precision("auto") == "bfloat16"
