"""The admin API: token required (401), refused when no token is configured (403), figures that match
the traffic sent, and the actions: search, invalidate one entry, purge, change a threshold."""
from __future__ import annotations

import logging

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.admin.conftest import ADMIN, TOKEN, chat, traffic
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

ROUTES = [("get", "/admin"), ("get", "/admin/api/stats"), ("get", "/admin/api/entries"),
          ("delete", "/admin/api/entries/" + "a" * 64), ("post", "/admin/api/purge"),
          ("post", "/admin/api/thresholds"), ("get", "/admin/semantic")]


@pytest.mark.parametrize("method,path", ROUTES)
def test_every_admin_route_needs_the_token(client, method, path):
    assert getattr(client, method)(path).status_code == 401
    assert getattr(client, method)(path, headers={"authorization": "Bearer wrong"}).status_code == 401
    assert getattr(client, method)(path, headers={"authorization": TOKEN}).status_code == 401   # no scheme


@pytest.mark.parametrize("method,path", ROUTES)
def test_without_a_configured_token_admin_is_refused_not_open(method, path, monkeypatch):
    monkeypatch.delenv("CACHEGATE_ADMIN_TOKEN", raising=False)
    with TestClient(create_app(make_settings(), backends={"echo": EchoBackend()})) as client:
        r = getattr(client, method)(path, headers=ADMIN)
        assert r.status_code == 403


def test_token_from_the_environment(monkeypatch):
    monkeypatch.setenv("CACHEGATE_ADMIN_TOKEN", "from-env")
    with TestClient(create_app(make_settings(), backends={"echo": EchoBackend()})) as client:
        assert client.get("/admin/api/stats", headers={"authorization": "Bearer from-env"}).status_code == 200


def test_dashboard_page_is_served_with_the_token(client):
    r = client.get("/admin", headers=ADMIN)
    assert r.status_code == 200 and "<canvas" in r.text
    assert TOKEN not in r.text


def test_stats_match_the_traffic(client):
    seen = traffic(client)
    stats = client.get("/admin/api/stats", headers=ADMIN).json()
    t = stats["totals"]
    assert t["requests"] == sum(seen.values())
    for outcome in ("hit-exact", "hit-semantic", "miss", "error"):
        assert t["by_cache"][outcome] == seen[outcome]
    answered = sum(seen.values()) - seen["error"]
    assert t["hit_rate"] == pytest.approx((seen["hit-exact"] + seen["hit-semantic"]) / answered, abs=1e-4)
    assert t["latency_ms"]["hit"]["count"] == seen["hit-exact"] + seen["hit-semantic"]
    assert t["latency_ms"]["miss"]["p50"] > 0 and t["tokens_saved"] > 0 and t["cost_saved"] > 0
    assert t["routes"] == {"small": answered}
    assert stats["series"][-1]["miss"] == seen["miss"] and len(stats["series"]) == 60
    top = stats["top_entries"][0]
    assert top["question"] in ("How do I reset my password?", "What are your opening hours?") and top["hits"] >= 1
    assert {m["question"] for m in stats["recent_misses"]} >= {"Where is my parcel right now?"}
    assert stats["stores"]["exact"]["up"] and stats["backends"][0]["model"] == "echo"
    assert stats["scope"] == "replica"


def test_search_finds_entries_by_question(client):
    traffic(client)
    found = client.get("/admin/api/entries", params={"q": "parcel"}, headers=ADMIN).json()["entries"]
    assert {e["question"] for e in found} == {"Where is my parcel right now?"}
    assert {e["tier"] for e in found} == {"exact", "semantic"}      # one entry in each tier


def test_invalidating_an_exact_entry_makes_the_next_request_miss(client):
    key = chat(client, "Do you ship abroad?").headers["x-cachegate-key"]
    assert chat(client, "Do you ship abroad?").headers["x-cachegate-cache"] == "hit-exact"
    r = client.delete(f"/admin/api/entries/{key}", headers=ADMIN)
    assert r.json() == {"deleted": key}
    assert chat(client, "Do you ship abroad?", cache={"no-store": True}).headers["x-cachegate-cache"] != "hit-exact"


def test_invalidating_a_semantic_entry(client):
    chat(client, "How do I reset my password?")
    entry = next(e for e in client.get("/admin/api/entries", headers=ADMIN).json()["entries"] if e["tier"] == "semantic")
    assert client.delete(f"/admin/api/entries/{entry['key']}", headers=ADMIN).json() == {"deleted": entry["key"]}
    assert client.app.state.services.semantic.catalog.ids_where(tenant="default") == []


def test_purging_a_tenant_empties_both_tiers(client):
    traffic(client)
    r = client.post("/admin/api/purge", json={"tenant": "default"}, headers=ADMIN).json()
    assert r["exact"] == 3 and r["semantic"] == 3
    assert chat(client, "What are your opening hours?").headers["x-cachegate-cache"] == "miss"


def test_purging_one_namespace_keeps_the_others(client):
    chat(client, "Hello there", cache={"namespace": "support"})
    chat(client, "Hello there")
    r = client.post("/admin/api/purge", json={"tenant": "default", "namespace": "support"}, headers=ADMIN).json()
    assert r["exact"] == 1
    assert chat(client, "Hello there").headers["x-cachegate-cache"] == "hit-exact"


def test_changing_a_namespace_threshold(client):
    for namespace in ("loose", "strict"):
        chat(client, "How do I reset my password?", cache={"namespace": namespace})
    loose = chat(client, "How can I reset my password?", cache={"namespace": "loose"})
    assert loose.headers["x-cachegate-cache"] == "hit-semantic"
    similarity = float(loose.headers["x-cachegate-similarity"])
    r = client.post("/admin/api/thresholds", json={"namespace": "strict", "threshold": min(1.0, similarity + 0.001)},
                    headers=ADMIN)
    assert r.status_code == 200 and list(r.json()["namespaces"]) == ["strict"]
    strict = chat(client, "How can I reset my password?", cache={"namespace": "strict"})
    assert strict.headers["x-cachegate-cache"] == "miss"


@pytest.mark.parametrize("path,body", [
    ("/admin/api/purge", {}), ("/admin/api/purge", {"tenant": ""}), ("/admin/api/thresholds", {"namespace": "x"}),
    ("/admin/api/thresholds", {"namespace": "x", "threshold": 3}),
    ("/admin/api/thresholds", {"namespace": "x", "target_false_hit_rate": 0.02}),   # wrong kind for cosine
])
def test_bad_admin_bodies_are_400(client, path, body):
    r = client.post(path, json=body, headers=ADMIN)
    assert r.status_code == 400 and r.json()["error"]["message"]


def test_bad_entry_key_is_400(client):
    assert client.delete("/admin/api/entries/not-a-key", headers=ADMIN).status_code == 400


def test_the_token_is_never_logged(client, caplog):
    caplog.set_level(logging.DEBUG)
    traffic(client)
    client.get("/admin/api/stats", headers=ADMIN)
    client.get("/admin/api/stats", headers={"authorization": "Bearer wrong"})
    assert TOKEN not in caplog.text
    assert TOKEN not in repr(client.app.state.services.settings)
