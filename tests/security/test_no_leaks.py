"""What a cache must never do: store errors, partial streams or no-store requests, or hand one
request's headers or identity to another."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
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


# -- nothing internal leaks: upstream URLs, exception text, replica URLs, tenant names ----------------
def upstream_gateway(url: str, keys=None, **model):
    from tests.support.live_server import LiveServer
    entry = {"name": "up", "backend": "upstream", "replicas": [url], "max_context": 4096,
             "retry": {"attempts": 1}} | model
    settings = make_settings(models=[entry], auth={"keys": keys or []}, cache={"semantic": {"enabled": False}})
    return LiveServer(create_app(settings))


def test_backend_failures_reach_clients_as_generic_messages_with_a_request_id():
    import httpx

    from tests.support.redis_server import free_port
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with upstream_gateway(dead) as server:
        r = httpx.post(server.url + "/v1/chat/completions", json={
            "model": "up", "messages": [{"role": "user", "content": "hi"}]})
        metrics = httpx.get(server.url + "/metrics").text
    assert r.status_code == 503
    message = r.json()["error"]["message"]
    assert r.headers["x-request-id"] in message
    assert "127.0.0.1" not in r.text and dead not in r.text and "unreachable" not in r.text
    assert dead not in metrics and 'replica="up#0"' in metrics


def test_stream_errors_name_the_request_not_the_exception(client, backend):
    backend.fail_after_chunks = 1
    r = ask(client, "one two three", stream=True)
    error = [line for line in r.text.split("\n") if '"error"' in line][0]
    assert "died" not in error and r.headers["x-request-id"] in error


async def test_upstreams_get_the_clients_own_user_never_the_tenant():
    import openai

    from tests.support.fake_upstream import FakeUpstream
    async with FakeUpstream() as upstream:
        with upstream_gateway(upstream.url, keys=[{"key": "sk-acme", "tenant": "acme-corp"}]) as server:
            client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="sk-acme", max_retries=0)
            await client.chat.completions.create(model="up", messages=[{"role": "user", "content": "a"}])
            await client.chat.completions.create(model="up", messages=[{"role": "user", "content": "b"}],
                                                 user="end-user-42")
    assert "user" not in upstream.requests[0] and upstream.requests[1]["user"] == "end-user-42"
    assert not any("acme-corp" in str(h) for h in upstream.headers)
    assert not any("acme-corp" in str(b) for b in upstream.requests)
