"""Routing through the app: auto by complexity, pinned tiers and models, fallback, cost accounting."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

SIMPLE = "What is the capital of France?"
COMPLEX = "Prove step by step, in detail, that there are infinitely many primes, and compare two proofs."


class Named(EchoBackend):
    def answer_for(self, request):
        return f"{self.info.name} says hi"


@pytest.fixture
def small():
    return Named("small-m", tier="small")


@pytest.fixture
def large():
    return Named("large-m", tier="large")


@pytest.fixture
def client(small, large):
    settings = make_settings(
        models=[{"name": "small-m", "tier": "small", "price_in_per_1k": 0.1, "price_out_per_1k": 0.2},
                {"name": "large-m", "tier": "large", "price_in_per_1k": 1.0, "price_out_per_1k": 2.0}],
        cache={"semantic": {"enabled": False}})
    with TestClient(create_app(settings, backends={"small-m": small, "large-m": large})) as c:
        yield c


def ask(client, content, model="auto", **kw):
    return client.post("/v1/chat/completions",
                       json={"model": model, "messages": [{"role": "user", "content": content}]} | kw)


def test_auto_sends_simple_requests_to_the_small_model(client, small, large):
    r = ask(client, SIMPLE)
    assert r.status_code == 200
    assert r.headers["x-cachegate-route"] == "auto:small:small-m"
    assert r.json()["model"] == "small-m"
    assert (small.calls, large.calls) == (1, 0)


def test_auto_sends_complex_requests_to_the_large_model(client, small, large):
    r = ask(client, COMPLEX)
    assert r.headers["x-cachegate-route"] == "auto:large:large-m"
    assert r.json()["choices"][0]["message"]["content"] == "large-m says hi"
    assert large.calls == 1


@pytest.mark.parametrize("model,answered", [("large", "large-m"), ("small", "small-m"), ("large-m", "large-m")])
def test_clients_can_pin_a_tier_or_a_model(client, model, answered):
    r = ask(client, SIMPLE, model=model)
    assert r.json()["model"] == answered


def test_a_dead_large_model_falls_back_to_the_small_one(client, small, large):
    large.fail_before = True
    r = ask(client, COMPLEX)
    assert r.status_code == 200
    assert r.json()["choices"][0]["message"]["content"] == "small-m says hi"
    assert r.headers["x-cachegate-route"] == "auto:large:small-m;fallback-from=large-m"
    large.fail_before = False
    again = ask(client, COMPLEX)                   # the degraded answer was not kept
    assert again.headers["x-cachegate-cache"] == "miss"
    assert again.json()["choices"][0]["message"]["content"] == "large-m says hi"


def test_a_dead_large_model_falls_back_when_streaming(client, large):
    large.fail_before = True
    r = ask(client, COMPLEX, stream=True)
    assert r.status_code == 200 and "small-m says hi".split()[0] in r.text
    assert r.text.rstrip().endswith("[DONE]")


def test_when_every_model_fails_the_client_gets_a_503(client, small, large):
    small.fail_before = large.fail_before = True
    r = ask(client, COMPLEX)
    assert r.status_code == 503
    assert r.json()["error"]["type"] == "server_error"


def test_request_errors_do_not_fall_back(client, small):
    r = ask(client, "word " * 2000, model="large")       # too long for the large model's context
    assert r.status_code == 400 and small.calls == 0


def test_unknown_model_is_still_404(client):
    assert ask(client, SIMPLE, model="gpt-9").status_code == 404


def test_cost_is_counted_on_misses_and_saved_on_hits(client):
    ask(client, COMPLEX)
    ask(client, COMPLEX)
    stats = client.app.state.services.stats
    # Named answers "large-m says hi": 3 completion tokens; the stand-in counts prompt words
    spent, saved = stats.cost["large-m"], stats.cost_saved["large-m"]
    assert spent > 0 and saved == pytest.approx(spent)
    assert stats.tokens_saved["large-m"] == stats.tokens_served["large-m"]
    assert stats.routes[("large", "large-m", False)] == 1
