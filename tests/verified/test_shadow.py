"""Shadow checks: a share of semantic hits is asked again in the background and judged against the fresh
answer; bounded by a budget per minute, skipped while the backends are busy, never delaying a client."""
from __future__ import annotations

from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.verified.shadow import Budget
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

QUESTION, PARAPHRASE = "How can I reset my email password?", "How do I reset my email password?"


def gateway(backend, **verify):
    semantic = {"policy": "cosine", "threshold": 0.9, "verify_rate": 1.0,
                "verify": {"answer_similarity": 0.999} | verify}
    return TestClient(create_app(make_settings(cache={"exact": {"enabled": False}, "semantic": semantic}),
                                 backends={"echo": backend}))


def ask(client, content):
    return client.post("/v1/chat/completions", json={"model": "echo", "temperature": 0,
                                                     "messages": [{"role": "user", "content": content}]})


def test_semantic_hits_are_re_asked_within_the_budget_and_judged():
    backend = EchoBackend()
    with gateway(backend, per_minute=3) as client:
        ask(client, QUESTION)
        hits = [ask(client, PARAPHRASE).headers["x-cachegate-cache"] for _ in range(6)]
        services = client.app.state.services
        client.portal.call(services.verification.shadow.drain)
        counts, view = dict(services.verification.shadow.counts), services.verification.view()
    assert hits == ["hit-semantic"] * 6
    assert backend.calls == 1 + 3 and counts["checked"] == 3 and counts["over_budget"] == 3
    # the echo answers each question with its own words: the served answer disagrees with the fresh one
    assert view["namespaces"]["default"]["bad"] == 3 and view["labels"] == 3


def test_no_check_while_the_backends_are_busy():
    backend = EchoBackend()
    with gateway(backend, busy_at=1) as client:
        ask(client, QUESTION)
        shadow = client.app.state.services.verification.shadow
        pool = client.app.state.services.gateway.backends["echo"]
        pool.outstanding = 1                                    # one request in flight on the model
        ask(client, PARAPHRASE)
        client.portal.call(shadow.drain)
    assert shadow.counts["busy"] == 1 and backend.calls == 1


def test_the_budget_is_a_sliding_minute():
    now = [0.0]
    budget = Budget(2, clock=lambda: now[0])
    assert [budget.take() for _ in range(3)] == [True, True, False]
    now[0] = 59.9
    assert not budget.take()
    now[0] = 60.1
    assert budget.take()


def test_a_check_runs_after_the_client_has_its_answer():
    """The re-ask is a background task: a slow backend delays the check, never the hit."""
    backend = EchoBackend(delay_s=0.0)
    with gateway(backend) as client:
        ask(client, QUESTION)
        backend.delay_s = 0.2
        hit = ask(client, PARAPHRASE)
        assert hit.elapsed.total_seconds() < 0.2 * 3           # the echo's answer would take 6 words x 0.2 s
        client.portal.call(client.app.state.services.verification.shadow.drain)
    assert backend.calls == 2
