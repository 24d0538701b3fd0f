"""The answer log keeps what distillation needs and nothing else: fresh, whole answers of the large tier,
per tenant, within its bounds, never across excluded tenants or namespaces, never failing a request."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.distill.entry import AnswerEntry
from cachegate.distill.sinks import read_entries
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

KEYS = [{"key": "sk-acme", "tenant": "acme"}, {"key": "sk-globex", "tenant": "globex"}]


@pytest.fixture
def small():
    return EchoBackend("small-m", tier="small")


@pytest.fixture
def large():
    return EchoBackend("large-m", tier="large")


def gateway(tmp_path, small, large, **distill):
    settings = make_settings(
        models=[{"name": "small-m", "tier": "small"}, {"name": "large-m", "tier": "large"}],
        cache={"semantic": {"enabled": False}}, auth={"keys": KEYS},
        distill={"log": "file", "log_path": str(tmp_path / "log")} | distill)
    return TestClient(create_app(settings, backends={"small-m": small, "large-m": large}))


def ask(client, content, model="large", key="sk-acme", **body):
    return client.post("/v1/chat/completions", headers={"authorization": f"Bearer {key}"},
                       json={"model": model, "messages": [{"role": "user", "content": content}]} | body)


def logged(tmp_path, tenant=None) -> list[AnswerEntry]:
    return read_entries(tmp_path / "log", tenant) if (tmp_path / "log").exists() else []


def test_large_tier_answers_are_logged_with_their_messages(tmp_path, small, large):
    with gateway(tmp_path, small, large) as client:
        assert ask(client, "where is my parcel").status_code == 200
    [entry] = logged(tmp_path)
    assert entry.answer == "echo: where is my parcel" and entry.model == "large-m"
    assert entry.messages == [{"role": "user", "content": "where is my parcel"}]
    assert (entry.tenant, entry.namespace) == ("acme", "default")


def test_small_tier_answers_and_cache_hits_are_not_logged(tmp_path, small, large):
    with gateway(tmp_path, small, large) as client:
        assert ask(client, "hello", model="small").status_code == 200
        ask(client, "where is my parcel")
        hit = ask(client, "where is my parcel")
        assert hit.headers["x-cachegate-cache"] == "hit-exact"
    assert [e.question for e in logged(tmp_path)] == ["where is my parcel"]


def test_cut_answers_fallbacks_and_no_store_are_not_logged(tmp_path, small, large):
    with gateway(tmp_path, small, large) as client:
        assert ask(client, "a long question with many words", max_tokens=2).json()["choices"][0][
            "finish_reason"] == "length"
        assert ask(client, "keep this private", cache={"no-store": True}).status_code == 200
        large.fail_before = True
        fell = ask(client, "the large model is down")
        assert fell.status_code == 200 and "fallback-from=large-m" in fell.headers["x-cachegate-route"]
        large.fail_before, large.fail_after_chunks = False, 1
        ask(client, "dies mid answer", stream=True)
    assert logged(tmp_path) == []


def test_excluded_tenants_and_namespaces_are_not_logged(tmp_path, small, large):
    with gateway(tmp_path, small, large, exclude_tenants=["globex"], exclude_namespaces=["hr"]) as client:
        ask(client, "from globex", key="sk-globex")
        ask(client, "about payroll", cache={"namespace": "hr"})
        ask(client, "about parcels", cache={"namespace": "shop"})
    assert [(e.tenant, e.namespace) for e in logged(tmp_path)] == [("acme", "shop")]


def test_tenant_allow_list_and_tenant_scoped_reads(tmp_path, small, large):
    with gateway(tmp_path, small, large, tenants=["globex"]) as client:
        ask(client, "from acme")
        ask(client, "from globex", key="sk-globex")
    assert [e.tenant for e in logged(tmp_path)] == ["globex"]
    assert logged(tmp_path, tenant="acme") == []


def test_a_failing_log_never_fails_the_request(tmp_path, small, large):
    with gateway(tmp_path, small, large) as client:
        log = client.app.state.services.gateway.answer_log

        async def broken(entry):
            raise OSError("disk full")
        log.sink.append = broken
        r = ask(client, "where is my parcel")
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "echo: where is my parcel"
        assert log.counts.errors == 1


def test_no_log_unless_asked(tmp_path, small, large):
    settings = make_settings(models=[{"name": "small-m"}, {"name": "large-m", "tier": "large"}],
                             cache={"semantic": {"enabled": False}})
    with TestClient(create_app(settings, backends={"small-m": small, "large-m": large})) as client:
        assert client.app.state.services.gateway.answer_log is None
