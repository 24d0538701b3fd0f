"""Per-request controls, single-flight, admission, eviction and invalidation of the semantic tier."""
from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.semantic.conftest import ask
from tests.semantic.test_semantic_tier import PARAPHRASE, QUESTION
from tests.support.fake_backend import EchoBackend

ADMIN = {"authorization": "Bearer secret"}


@pytest.fixture(autouse=True)
def admin_token(monkeypatch):
    monkeypatch.setenv("CACHEGATE_ADMIN_TOKEN", "secret")


def cache_of(response) -> str:
    return response.headers["x-cachegate-cache"]


def test_no_cache_skips_lookups_but_still_stores(client, backend):
    ask(client, QUESTION)
    r = ask(client, QUESTION, headers={"cache-control": "no-cache"})
    assert cache_of(r) == "bypass" and backend.calls == 2
    assert cache_of(ask(client, PARAPHRASE, cache={"no-cache": True})) == "bypass"
    assert cache_of(ask(client, PARAPHRASE)) == "hit-exact"      # the no-cache answer was stored


@pytest.mark.parametrize("how", [{"headers": {"cache-control": "no-store"}}, {"cache": {"no-store": True}}])
def test_no_store_is_never_stored(client, tier, how):
    ask(client, QUESTION, **how)
    assert len(tier.catalog) == 0
    assert cache_of(ask(client, QUESTION)) == "miss"


def test_max_age_refuses_older_answers(client, monkeypatch):
    import time
    ask(client, QUESTION)
    later = time.time() + 100
    monkeypatch.setattr("cachegate.cache.semantic.lookup.time.time", lambda: later)
    monkeypatch.setattr("cachegate.pipeline.time.time", lambda: later)
    assert cache_of(ask(client, PARAPHRASE, headers={"cache-control": "max-age=50"})) == "miss"
    assert cache_of(ask(client, QUESTION.lower(), cache={"s-maxage": 500})) == "hit-semantic"


def test_namespaces_partition_the_cache(client):
    ask(client, QUESTION, cache={"namespace": "support"})
    assert cache_of(ask(client, PARAPHRASE, cache={"namespace": "sales"})) == "miss"
    assert cache_of(ask(client, PARAPHRASE, cache={"namespace": "support"})) == "hit-semantic"
    assert cache_of(ask(client, QUESTION, cache={"namespace": "support"})) == "hit-exact"
    assert cache_of(ask(client, QUESTION)) == "miss"                     # the default namespace is apart too


@pytest.mark.parametrize("body, header", [
    ({"cache": {"ttl": -1}}, None), ({"cache": {"nocache": True}}, None),
    ({"cache": {"namespace": "a:b"}}, None), ({}, "max-age=soon"),
])
def test_bad_cache_controls_are_openai_400s(client, body, header):
    r = ask(client, QUESTION, headers={"cache-control": header} if header else None, **body)
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"


def test_errors_and_cut_streams_are_never_stored(client, backend, tier):
    backend.fail_before = True
    assert ask(client, QUESTION).status_code == 503
    backend.fail_before = False
    backend.fail_after_chunks = 2
    ask(client, QUESTION, stream=True)
    assert len(tier.catalog) == 0


def test_single_flight_makes_one_backend_call_for_ten_identical_misses():
    backend = EchoBackend(delay_s=0.05)
    with TestClient(create_app(make_settings(), backends={"echo": backend})) as client:
        barrier, results = threading.Barrier(10), []

        def one():
            barrier.wait()
            results.append(ask(client, "a question nobody asked before"))
        threads = [threading.Thread(target=one) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert backend.calls == 1
    assert {r.json()["choices"][0]["message"]["content"] for r in results} == {"echo: a question nobody asked before"}
    assert sum(r.headers.get("x-cachegate-single-flight") == "joined" for r in results) >= 1


def test_entry_count_bound_evicts_least_recently_used():
    with TestClient(create_app(make_settings(cache={"semantic": {"max_entries": 4}}),
                               backends={"echo": EchoBackend()})) as client:
        tier = client.app.state.services.semantic
        questions = ["What is the boiling point of water?", "Who wrote Hamlet?", "How far is the Moon?",
                     "What is the speed of light?", "How many legs does a spider have?"]
        for q in questions:
            ask(client, q)
        assert len(tier.catalog) <= 4 and tier.counts["evicted"] >= 1
        assert questions[-1] in {e.query for e in _entries(client, tier)}
        tier.catalog.check()


def _entries(client, tier):
    return [e for e in client.portal.call(tier.entries.get_many, list(tier.catalog.meta)) if e]


def test_invalidate_by_entry_id(client, tier):
    hit_id = None
    ask(client, QUESTION)
    hit_id = ask(client, PARAPHRASE).headers["x-cachegate-entry"]
    assert client.get(f"/admin/semantic/entries/{hit_id}", headers=ADMIN).json()["query"] == QUESTION
    assert client.delete(f"/admin/semantic/entries/{hit_id}", headers=ADMIN).json() == {"deleted": [hit_id]}
    assert cache_of(ask(client, PARAPHRASE + " ")) == "miss"
    assert client.get(f"/admin/semantic/entries/{hit_id}", headers=ADMIN).status_code == 404


def test_invalidate_by_namespace(client, tier):
    ask(client, QUESTION, cache={"namespace": "support"})
    ask(client, "Who wrote Hamlet?", cache={"namespace": "support"})
    ask(client, QUESTION, cache={"namespace": "sales"})
    r = client.post("/admin/semantic/invalidate", json={"namespace": "support"}, headers=ADMIN)
    assert len(r.json()["deleted"]) == 2
    assert {m.namespace for m in tier.catalog.meta.values()} == {"sales"}


def test_invalidate_everything_similar_to_a_question(client, tier):
    ask(client, QUESTION)
    ask(client, "How can I reset my email password quickly?")
    ask(client, "Who wrote Hamlet?")
    r = client.post("/admin/semantic/invalidate", json={"query": "reset email password", "min_similarity": 0.7},
                    headers=ADMIN)
    assert len(r.json()["deleted"]) == 2
    assert cache_of(ask(client, PARAPHRASE)) == "miss"
    assert cache_of(ask(client, "who wrote Hamlet")) == "hit-semantic"


def test_admin_needs_the_token(client):
    assert client.post("/admin/semantic/invalidate", json={"namespace": "x"}).status_code == 401
    r = client.post("/admin/semantic/invalidate", json={}, headers=ADMIN)
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    assert client.delete("/admin/semantic/entries/nothex", headers=ADMIN).status_code == 400


def test_admin_figures_count_the_embedder_and_name_its_precision(client, tier):
    ask(client, QUESTION)
    ask(client, PARAPHRASE)
    embedder = client.get("/admin/semantic", headers=ADMIN).json()["embedder"]
    assert embedder["encoded"] >= 2 and embedder["batches"] >= 1
    assert embedder["precision"] == tier.embedder.precision in ("float32", "bfloat16")
