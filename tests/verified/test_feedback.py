"""`POST /v1/cache/feedback`: a client marks an answer it was served from the cache as wrong; the entry is
invalidated and the false hit counted for its namespace. Only the tenant that was served it can judge it."""
from __future__ import annotations

from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

KEYS = [{"key": "sk-a", "tenant": "a"}, {"key": "sk-b", "tenant": "b"}]
QUESTION, PARAPHRASE = "How can I reset my email password?", "How do I reset my email password?"


def gateway(backend):
    settings = make_settings(auth={"keys": KEYS}, cache={"semantic": {"policy": "cosine", "threshold": 0.9}})
    return TestClient(create_app(settings, backends={"echo": backend}))


def ask(client, content, key="sk-a"):
    return client.post("/v1/chat/completions", headers={"authorization": f"Bearer {key}"},
                       json={"model": "echo", "messages": [{"role": "user", "content": content}]})


def feedback(client, response_id, good=False, key="sk-a"):
    return client.post("/v1/cache/feedback", headers={"authorization": f"Bearer {key}"},
                       json={"id": response_id, "good": good})


def test_a_wrong_semantic_hit_is_invalidated_and_counted():
    backend = EchoBackend()
    with gateway(backend) as client:
        ask(client, QUESTION)
        hit = ask(client, PARAPHRASE)
        assert hit.headers["x-cachegate-cache"] == "hit-semantic"
        verdict = feedback(client, hit.json()["id"])
        again = ask(client, PARAPHRASE)
        view = client.app.state.services.verification.view()
        metrics = client.get("/metrics").text
    assert verdict.status_code == 200
    assert verdict.json() == {"id": hit.json()["id"], "tier": "semantic", "good": False,
                              "invalidated": [hit.headers["x-cachegate-entry"]]}
    assert again.headers["x-cachegate-cache"] == "miss"
    assert view["namespaces"]["default"]["bad"] == 1
    assert 'cachegate_false_hit_rate{kind="estimate",namespace="default"} 1.0' in metrics
    assert 'cachegate_verified_hits{namespace="default",source="feedback",verdict="bad"} 1.0' in metrics


def test_a_wrong_exact_hit_is_invalidated():
    with gateway(EchoBackend()) as client:
        ask(client, QUESTION)
        hit = ask(client, QUESTION)
        assert feedback(client, hit.json()["id"]).json()["invalidated"] == [hit.headers["x-cachegate-key"]]
        assert ask(client, QUESTION).headers["x-cachegate-cache"] != "hit-exact"


def test_feedback_is_tenant_scoped_and_judged_once():
    with gateway(EchoBackend()) as client:
        ask(client, QUESTION)
        hit = ask(client, PARAPHRASE)
        other = feedback(client, hit.json()["id"], key="sk-b")
        unknown = feedback(client, "chatcmpl-nothing")
        first, second = feedback(client, hit.json()["id"], good=True), feedback(client, hit.json()["id"])
        unauthenticated = client.post("/v1/cache/feedback", json={"id": hit.json()["id"], "good": False})
    assert other.status_code == unknown.status_code == second.status_code == 404
    assert other.json()["error"]["code"] == "unknown_response"
    assert first.status_code == 200 and first.json()["invalidated"] == []
    assert unauthenticated.status_code == 401


def test_feedback_bodies_are_validated():
    with gateway(EchoBackend()) as client:
        r = client.post("/v1/cache/feedback", headers={"authorization": "Bearer sk-a"}, json={"id": "x"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "good"
