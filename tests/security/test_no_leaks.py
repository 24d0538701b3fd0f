"""What a cache must never do: store errors, partial streams or no-store requests, or hand one
request's headers or identity to another."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

OWN_HEADERS = {"content-type", "content-length", "x-cachegate-cache", "x-cachegate-key", "x-cachegate-route",
               "x-cachegate-similarity", "x-cachegate-entry", "x-cachegate-single-flight", "cache-control",
               "x-request-id"}


@pytest.fixture
def backend():
    return EchoBackend()


@pytest.fixture
def client(backend):
    keys = [{"key": "sk-a", "tenant": "a"}, {"key": "sk-b", "tenant": "b"}]
    settings = make_settings(auth={"keys": keys}, cache={"semantic": {"policy": "cosine", "threshold": 0.9}})
    with TestClient(create_app(settings, backends={"echo": backend})) as c:
        yield c


def ask(client, content="Where is my order?", key="sk-a", headers=None, **kw):
    h = {"authorization": f"Bearer {key}", "x-request-id": "req-of-" + key, "cookie": "session=" + key}
    body = {"model": "echo", "messages": [{"role": "user", "content": content}]} | kw
    return client.post("/v1/chat/completions", json=body, headers=h | (headers or {}))


def test_hits_carry_only_their_own_headers_and_a_fresh_id(client):
    fresh = ask(client)
    hit = ask(client)
    assert hit.headers["x-cachegate-cache"] == "hit-exact"
    assert set(hit.headers) <= OWN_HEADERS
    assert "set-cookie" not in hit.headers and "req-of-sk-a" not in str(hit.headers)
    assert hit.json()["id"] != fresh.json()["id"]


def test_errors_are_never_stored(client, backend):
    backend.fail_before = True
    assert ask(client, "fails").status_code == 503
    backend.fail_before = False
    assert ask(client, "fails").headers["x-cachegate-cache"] == "miss"


def test_partial_streams_are_never_stored(client, backend):
    backend.fail_after_chunks = 1
    r = ask(client, "one two three", stream=True)
    assert '"error"' in r.text
    backend.fail_after_chunks = None
    assert ask(client, "one two three").headers["x-cachegate-cache"] == "miss"
    assert ask(client, "one two three!").headers["x-cachegate-cache"] != "hit-exact"


@pytest.mark.parametrize("how", [{"headers": {"cache-control": "no-store"}}, {"cache": {"no-store": True}}])
def test_no_store_requests_are_never_stored(client, how):
    ask(client, "private question", **how)
    assert ask(client, "private question").headers["x-cachegate-cache"] == "miss"


def test_another_tenant_never_gets_the_entry(client, backend):
    ask(client, "shared words", key="sk-a")
    assert ask(client, "shared words", key="sk-b").headers["x-cachegate-cache"] == "miss"
    assert backend.calls == 2
