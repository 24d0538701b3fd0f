"""API keys map to tenants: without a valid key a request gets 401 before any work, and tenants never
see each other's entries in either tier."""
from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient

from cachegate.access.auth import digest
from cachegate.api.app import create_app
from cachegate.commands.main import main
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

KEYS = [{"key": "sk-acme", "tenant": "acme"}, {"key_sha256": digest("sk-globex"), "tenant": "globex"}]


@pytest.fixture
def backend():
    return EchoBackend()


@pytest.fixture
def client(backend):
    settings = make_settings(auth={"keys": KEYS}, cache={"semantic": {"policy": "cosine", "threshold": 0.9}})
    with TestClient(create_app(settings, backends={"echo": backend})) as c:
        yield c


def ask(client, key: str | None, content="How do I reset my password?", **kw):
    headers = {"authorization": f"Bearer {key}"} if key else {}
    body = {"model": "echo", "messages": [{"role": "user", "content": content}]} | kw
    return client.post("/v1/chat/completions", json=body, headers=headers)


@pytest.mark.parametrize("key", [None, "sk-wrong", ""])
def test_requests_without_a_valid_key_get_401(client, backend, key):
    r = ask(client, key)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "invalid_api_key" and r.json()["error"]["type"] == "invalid_request_error"
    assert backend.calls == 0


def test_401_comes_before_parsing_the_body(client):
    r = client.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 401


def test_keys_in_clear_and_as_sha256_both_work(client):
    assert ask(client, "sk-acme").status_code == 200
    assert ask(client, "sk-globex").status_code == 200


def test_tenants_never_see_each_others_exact_or_semantic_entries(client, backend):
    ask(client, "sk-acme")
    assert ask(client, "sk-globex").headers["x-cachegate-cache"] == "miss"
    assert ask(client, "sk-globex", "How can I reset my password?").headers["x-cachegate-cache"] == "hit-semantic"
    other = ask(client, "sk-acme", "How can I reset my password?")
    assert other.headers["x-cachegate-cache"] == "hit-semantic"   # acme's own paraphrase entry, not globex's
    assert backend.calls == 2


def test_tenant_reaches_the_backend(client, backend):
    seen = []
    original = backend.generate

    async def spy(request):
        seen.append(request.tenant)
        async for chunk in original(request):
            yield chunk
    backend.generate = spy
    ask(client, "sk-acme", "a new question")
    assert seen == ["acme"]


def test_open_gateway_without_keys(backend):
    with TestClient(create_app(make_settings(), backends={"echo": backend})) as client:
        assert ask(client, None).status_code == 200


@pytest.mark.redis
def test_keys_from_redis(redis_url, backend, capsys):
    prefix = f"keys-{uuid.uuid4().hex[:8]}:"
    assert main(["keys", "add", "--tenant", "initech", "--rpm", "100", "--redis-url", redis_url,
                 "--prefix", prefix]) == 0
    key = capsys.readouterr().out.strip()
    settings = make_settings(auth={"redis_keys": True, "cache_s": 0},
                             redis={"url": redis_url, "key_prefix": prefix}, cache={"semantic": {"enabled": False}})
    with TestClient(create_app(settings, backends={"echo": backend})) as client:
        assert ask(client, key).status_code == 200
        assert ask(client, "sk-not-there").status_code == 401
        assert main(["keys", "revoke", "--key", key, "--redis-url", redis_url, "--prefix", prefix]) == 0
        assert ask(client, key).status_code == 401


@pytest.mark.redis
async def test_bogus_keys_never_grow_the_remembered_keys_past_their_bound(redis_url):
    import redis.asyncio as aioredis

    from cachegate.access.auth import KeyRing
    from cachegate.errors import Unauthorized
    from cachegate.settings import AuthSettings
    client = aioredis.Redis.from_url(redis_url)
    prefix = f"kc-{uuid.uuid4().hex[:8]}:"
    await client.hset(f"{prefix}apikey:{digest('sk-real')}", mapping={"tenant": "real"})
    ring = KeyRing(AuthSettings(redis_keys=True, cache_entries=100), client, prefix)
    assert (await ring.authenticate("Bearer sk-real")).tenant == "real"
    for i in range(2_000):
        with pytest.raises(Unauthorized):
            await ring.authenticate(f"Bearer sk-bogus-{i}")
    assert len(ring.remembered) == 100
    assert (await ring.authenticate("Bearer sk-real")).tenant == "real"     # still answered (from Redis)
    await client.aclose()
