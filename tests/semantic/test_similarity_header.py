"""The similarity a semantic hit reports is a cosine, within [-1, 1], even where the stored float16
vectors make the dot product of a question with itself come out above 1."""
from __future__ import annotations

import numpy as np
from fastapi.testclient import TestClient

from cachegate.cache.semantic.entry import _pack, _unpack
from tests.semantic.conftest import ask, semantic_app

CANDIDATES = [f"What are the opening hours of store number {i} on public holidays?" for i in range(60)]


def test_a_hit_on_the_same_question_reports_a_similarity_of_at_most_one(backend):
    with TestClient(semantic_app(backend, policy="cosine")) as client:
        embedder = client.app.state.services.semantic.embedder
        vectors = embedder.encode(CANDIDATES)
        overshoot = [q for q, v in zip(CANDIDATES, vectors) if float(np.dot(v, _unpack(_pack(v)))) > 1.00005]
        assert overshoot, "no question whose float16 round trip overshoots 1 (the case this test is about)"
        question = overshoot[0]
        ask(client, question, cache={"namespace": "n"})
        client.app.state.services.gateway.exact = None          # only the semantic tier may answer
        hit = ask(client, question, cache={"namespace": "n"})
    assert hit.headers["x-cachegate-cache"] == "hit-semantic"
    assert float(hit.headers["x-cachegate-similarity"]) <= 1.0
