"""The similarity a semantic hit reports is a cosine, within [-1, 1], even where the stored float16
vectors make the dot product of a question with itself come out above 1."""
from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient

from cachegate.cache.semantic.entry import _pack, _unpack
from tests.semantic.conftest import ask, semantic_app

QUESTION = "What are the opening hours of store number 7 on public holidays?"


def overshooting_unit_vector(dim: int) -> np.ndarray:
    """A unit vector whose float16 copy has a dot product of about 1.0002 with it: 0.99978 rounds up to 1.0 in
    float16. (Real embeddings overshoot too, but how often depends on the CPU's precision: 1 in 600 in float32.)"""
    v = np.zeros(dim, np.float32)
    v[0], v[1] = 0.99978, np.sqrt(1 - 0.99978 ** 2)
    return v / np.linalg.norm(v)


def test_a_hit_on_the_same_question_reports_a_similarity_of_at_most_one(backend, monkeypatch):
    with TestClient(semantic_app(backend, policy="cosine")) as client:
        embedder = client.app.state.services.semantic.embedder
        crafted, encode = overshooting_unit_vector(embedder.dim), embedder.encode

        def encode_with_the_question_overshooting(texts: list[str]) -> np.ndarray:
            out = encode(texts)
            out[[t == QUESTION for t in texts]] = crafted
            return out

        monkeypatch.setattr(embedder, "encode", encode_with_the_question_overshooting)
        assert float(np.dot(crafted, _unpack(_pack(crafted)))) > 1.00005     # shows as 1.0001 at 4 decimals
        ask(client, QUESTION, cache={"namespace": "n"})
        client.app.state.services.gateway.exact = None          # only the semantic tier may answer
        hit = ask(client, QUESTION, cache={"namespace": "n"})
    assert hit.headers["x-cachegate-cache"] == "hit-semantic"
    assert float(hit.headers["x-cachegate-similarity"]) <= 1.0
