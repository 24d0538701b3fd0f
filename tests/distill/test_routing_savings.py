"""What the router saves by sending requests to the (distilled) small model: counted per answer the router
chose small, against the large tier's prices, on /metrics and in the dashboard's figures; never for a
request that pinned its model."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

TOKEN = "admin-secret"


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setenv("CACHEGATE_ADMIN_TOKEN", TOKEN)
    settings = make_settings(
        models=[{"name": "distilled", "tier": "small", "price_in_per_1k": 0.1, "price_out_per_1k": 0.1},
                {"name": "large-m", "tier": "large", "price_in_per_1k": 1.0, "price_out_per_1k": 1.0}],
        cache={"semantic": {"enabled": False}, "exact": {"enabled": False}})
    backends = {"distilled": EchoBackend("distilled"), "large-m": EchoBackend("large-m", tier="large")}
    with TestClient(create_app(settings, backends=backends)) as c:
        yield c


def ask(client, content, model):
    r = client.post("/v1/chat/completions", json={"model": model, "messages": [{"role": "user", "content": content}]})
    assert r.status_code == 200
    return r


def totals(client):
    return client.get("/admin/api/stats", headers={"authorization": f"Bearer {TOKEN}"}).json()["totals"]


def test_auto_requests_answered_small_count_what_the_large_tier_would_have_cost(client):
    r = ask(client, "where is my parcel", "auto")
    assert r.headers["x-cachegate-route"] == "auto:small:distilled"
    usage = r.json()["usage"]
    expected = usage["total_tokens"] * (1.0 - 0.1) / 1000
    assert totals(client)["routing_cost_saved"] == pytest.approx(expected, abs=1e-6)
    assert totals(client)["routes"] == {"small": 1}
    metrics = client.get("/metrics").text
    assert 'cachegate_routing_saved_total{model="distilled"}' in metrics


def test_pinned_requests_and_large_answers_save_nothing_by_routing(client):
    ask(client, "where is my parcel", "small")
    ask(client, "where is my parcel", "large")
    ask(client, "Prove step by step, in detail, that there are infinitely many primes.", "auto")
    assert totals(client)["routing_cost_saved"] == 0.0
