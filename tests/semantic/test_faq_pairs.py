"""The shipped policy on hand-written customer-service pairs (tests/semantic/data/faq_pairs.csv): near
misses are never served, reworded-only questions are, and through the app a paraphrase hits."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cachegate.cache.semantic.datasets import read_pairs_csv
from cachegate.cache.semantic.embedder import Embedder
from cachegate.cache.semantic.policy_file import packaged_policy
from policies.thresholds import Candidate, policy_from_dict
from tests.semantic.conftest import answer, ask

FAQ = read_pairs_csv(Path(__file__).parent / "data" / "faq_pairs.csv")


@pytest.fixture(scope="module")
def vectors() -> dict[str, np.ndarray]:
    texts = sorted({t for p in FAQ for t in (p.a, p.b)})
    return dict(zip(texts, Embedder().encode(texts)))


def served(policy, vectors, pairs) -> list[bool]:
    return [policy.decide(Candidate(p.b, p.a, float(vectors[p.a] @ vectors[p.b]), query_vector=vectors[p.b],
                                    entry_vector=vectors[p.a])).hit for p in pairs]


def test_near_misses_are_never_served(vectors):
    near_misses = [p for p in FAQ if not p.duplicate]
    wrongly = [p for p, hit in zip(near_misses, served(policy_from_dict(packaged_policy()), vectors, near_misses))
               if hit]
    assert wrongly == []


def test_reworded_questions_are_served(vectors):
    pairs = [p for p in FAQ if p.a in ("How do I reset my password?", "How do I cancel my subscription?")
             and p.b.startswith("How can I")]
    assert len(pairs) == 2
    assert all(served(policy_from_dict(packaged_policy()), vectors, pairs))


def test_a_cosine_namespace_serves_paraphrases_but_no_near_miss(vectors):
    policy = policy_from_dict(packaged_policy(), cosine_namespaces={"faq": 0.88})
    hits = [policy.decide(Candidate(p.b, p.a, float(vectors[p.a] @ vectors[p.b]), query_vector=vectors[p.b],
                                    entry_vector=vectors[p.a]), "faq").hit for p in FAQ]
    labels = [p.duplicate for p in FAQ]
    assert not any(h and not y for h, y in zip(hits, labels))          # the vetoes still hold
    assert sum(h for h, y in zip(hits, labels) if y) >= sum(labels) * 0.4


def test_faq_paraphrase_hits_through_the_app_and_a_near_miss_does_not(client, backend):
    first = ask(client, "How do I reset my password?")
    again = ask(client, "How can I reset my password?")
    other = ask(client, "How do I reset my PIN?")
    assert first.headers["x-cachegate-cache"] == "miss"
    assert again.headers["x-cachegate-cache"] == "hit-semantic"
    assert answer(again) == answer(first)
    assert other.headers["x-cachegate-cache"] == "miss"
    assert answer(other) == "echo: How do I reset my PIN?"
    assert backend.calls == 2


def test_a_faq_namespace_configured_with_a_threshold_serves_a_rewording(backend):
    from fastapi.testclient import TestClient

    from tests.semantic.conftest import semantic_app
    app = semantic_app(backend, namespaces={"faq": {"threshold": 0.88}})
    with TestClient(app) as client:
        ask(client, "How do I reset my password?", cache={"namespace": "faq"})
        steps = ask(client, "What are the steps to reset my password?", cache={"namespace": "faq"})
        pin = ask(client, "How do I reset my PIN?", cache={"namespace": "faq"})
        assert steps.headers["x-cachegate-cache"] == "hit-semantic"
        assert pin.headers["x-cachegate-cache"] == "miss"
