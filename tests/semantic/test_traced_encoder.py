"""The encoder's frozen trace gives the eager pipeline's embeddings; long queues are encoded in two calls."""
from __future__ import annotations

import asyncio

import numpy as np
import pytest

from cachegate.cache.semantic.embedder import SPLIT_AT, Embedder, load_model
from cachegate.cache.semantic.traced import traceable, traced_forward

QUESTIONS = ["How do I reset my password?", "Where is my new card?", "Is the store open on Sunday?",
             "what's the exchange rate from dollars to euros", "hi", "Can you tell me why my transfer failed?"]


@pytest.mark.parametrize("texts", [
    QUESTIONS[:1],                                         # one text, no padding
    QUESTIONS,                                             # padded rows of other lengths than the trace's
    QUESTIONS * 3,
    ["user: " + "tell me about Paris. " * 80, "Who wrote Hamlet?"],   # past the model's 256-token window
    ["", "?", "é ü 日本語 🙂"],
])
def test_the_trace_embeds_like_the_eager_pipeline(texts):
    traced, eager = Embedder(precision="float32", cache_size=0), Embedder(precision="float32", trace=False)
    assert "traced" in traced.forward.__qualname__ and "traced" not in eager.forward.__qualname__
    assert np.abs(traced.encode(texts) - eager.encode(texts)).max() < 1e-5


def test_the_packaged_model_is_traced_and_other_pipelines_are_not():
    model = load_model(precision="float32")
    assert traceable(model)
    assert "traced" in Embedder(precision="float32").forward.__qualname__
    assert "traced" not in Embedder(precision="float32", trace=False).forward.__qualname__

    class Pipeline(list):                     # a CLS-pooled model: the trace would change its embeddings
        pass
    cls_pooled = Pipeline([model[0], type("Pooling", (), {"pooling_mode": "cls"})()])
    assert not traceable(cls_pooled) and traced_forward(cls_pooled) is None
    assert not traceable(Pipeline([model[0]]))


def test_a_short_queue_goes_in_one_call_and_a_long_one_in_halves():
    embedder = Embedder(max_batch=64)
    assert [embedder.take_size(n) for n in (1, SPLIT_AT - 1)] == [1, SPLIT_AT - 1]
    assert embedder.take_size(40) == 20 and embedder.take_size(41) == 21
    assert embedder.take_size(500) == 64                         # still at most max_batch
    assert Embedder(max_batch=1).take_size(40) == 1


def test_concurrent_lookups_share_calls_of_half_the_queue():
    embedder = Embedder(max_batch=64, cache_size=0, precision="float32")
    texts = [f"{q} ({i})" for i, q in enumerate(QUESTIONS * 8)][: 2 * SPLIT_AT]

    async def together():
        return await asyncio.gather(*(embedder.embed([t]) for t in texts))
    vectors = np.concatenate(asyncio.run(together()))
    assert embedder.batches >= 2 and embedder.encoded == len(texts)
    assert np.abs(vectors - embedder.encode(texts)).max() < 1e-5     # each lookup got its own text's vector
    embedder.close()
