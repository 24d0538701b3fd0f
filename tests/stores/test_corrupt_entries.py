"""A corrupt value in Redis (wrong types, nested without end, not JSON) is dropped, counted and served
as a miss, once; the next answer is stored again. Never a 500, never forever."""
from __future__ import annotations

import json
import uuid

import pytest
import redis
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

pytestmark = pytest.mark.redis
GOOD = {"text": "echo: hi", "finish_reason": "stop", "model": "echo", "created": 1.0,
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "cached_tokens": 0}}
CORRUPTIONS = {
    "not json": b"\xff{not json",
    "wrong types": json.dumps(GOOD | {"text": 5}).encode(),
    "usage a list": json.dumps(GOOD | {"usage": [1, 2]}).encode(),
    "deeply nested": ("[" * 100_000 + "]" * 100_000).encode(),
    "nested answer": json.dumps(GOOD | {"tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {}}}]}).encode(),
    "pieces that lie": json.dumps(GOOD | {"pieces": [1, 2]}).encode(),
    "negative usage": json.dumps(GOOD | {"usage": GOOD["usage"] | {"completion_tokens": -3}}).encode(),
}


def gateway_on(redis_url: str, semantic: bool):
    prefix = f"corrupt-{uuid.uuid4().hex[:8]}:"
    settings = make_settings(cache={"exact": {"store": "redis"},
                                    "semantic": {"store": "redis", "policy": "cosine", "enabled": semantic}},
                             redis={"url": redis_url, "key_prefix": prefix})
    with TestClient(create_app(settings, backends={"echo": EchoBackend()})) as client:
        yield client, redis.Redis.from_url(redis_url), prefix


@pytest.fixture
def exact_only(redis_url):
    yield from gateway_on(redis_url, semantic=False)


@pytest.fixture
def both_tiers(redis_url):
    yield from gateway_on(redis_url, semantic=True)


def ask(client, content="hi"):
    return client.post("/v1/chat/completions", json={"model": "echo", "messages": [{"role": "user", "content": content}]})


@pytest.mark.parametrize("raw", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupt_exact_entry_is_a_counted_miss_then_stored_again(exact_only, raw):
    client, r, prefix = exact_only
    key = ask(client).headers["x-cachegate-key"]
    r.set(f"{prefix}exact:default/default/{key}", raw)
    second = ask(client)
    assert second.status_code == 200 and second.headers["x-cachegate-cache"] == "miss"
    assert client.app.state.services.gateway.exact.corrupt == 1
    assert ask(client).headers["x-cachegate-cache"] == "hit-exact"
    assert 'cachegate_cache_faults{kind="exact_corrupt"} 1.0' in client.get("/metrics").text


@pytest.mark.parametrize("raw", [CORRUPTIONS["wrong types"], CORRUPTIONS["deeply nested"],
                                 json.dumps({"id": 1, "scope": "s", "qv": 5}).encode()])
def test_a_corrupt_semantic_entry_is_a_counted_miss(both_tiers, raw):
    client, r, prefix = both_tiers
    ask(client, "How do I reset my password?")
    [entry_key] = [k for k in r.keys(f"{prefix}semantic:*") if b"hits" not in k]
    r.set(entry_key, raw)
    paraphrase = ask(client, "How do I reset my password")
    assert paraphrase.status_code == 200 and paraphrase.headers["x-cachegate-cache"] == "miss"
    assert client.app.state.services.semantic.entries.corrupt == 1
    assert r.get(entry_key) != raw
