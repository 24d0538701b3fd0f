"""Per-key limits on requests and tokens per minute answer 429 with retry-after; in Redis they hold
across replicas; a sliding window lets the budget come back."""
from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient

from cachegate.app import create_app
from cachegate.auth import Principal
from cachegate.errors import RateLimited
from cachegate.ratelimit import RateLimiter
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend


def app(**extra):
    keys = [{"key": "sk-a", "tenant": "a", "requests_per_minute": 3}, {"key": "sk-b", "tenant": "b"},
            {"key": "sk-t", "tenant": "t", "tokens_per_minute": 10}]
    settings = make_settings(auth={"keys": keys}, cache={"semantic": {"enabled": False}}, **extra)
    return create_app(settings, backends={"echo": EchoBackend()})


def ask(client, key, content):
    return client.post("/v1/chat/completions", headers={"authorization": f"Bearer {key}"},
                       json={"model": "echo", "messages": [{"role": "user", "content": content}]})


def test_requests_per_minute_answer_429_with_retry_after():
    with TestClient(app()) as client:
        codes = [ask(client, "sk-a", f"q{i}").status_code for i in range(5)]
        assert codes == [200, 200, 200, 429, 429]
        r = ask(client, "sk-a", "again")
        assert r.json()["error"]["type"] == "rate_limit_error"
        assert 1 <= int(r.headers["retry-after"]) <= 60
        assert ask(client, "sk-b", "other key is not limited").status_code == 200


def test_tokens_per_minute_are_charged_for_backend_answers():
    with TestClient(app()) as client:
        first = ask(client, "sk-t", "one two three four five six")    # echo: 7 words + prompt tokens
        assert first.status_code == 200 and first.json()["usage"]["total_tokens"] >= 10
        assert ask(client, "sk-t", "next").status_code == 429


@pytest.mark.redis
def test_limits_hold_across_replicas_through_redis(redis_url):
    extra = {"redis": {"url": redis_url, "key_prefix": f"rl-{uuid.uuid4().hex[:8]}:"}}
    with TestClient(app(**extra)) as one, TestClient(app(**extra)) as two:
        codes = [ask(c, "sk-a", f"q{i}").status_code for i, c in enumerate([one, two, one, two])]
    assert codes == [200, 200, 200, 429]


async def test_sliding_window_lets_the_budget_come_back():
    now = [120.0]
    limiter = RateLimiter(clock=lambda: now[0])
    key = Principal("a", "k", requests_per_minute=2)
    await limiter.admit(key)
    await limiter.admit(key)
    with pytest.raises(RateLimited):
        await limiter.admit(key)
    now[0] += 60 + 45              # next minute, 3/4 in: the old minute weighs 1/4 → 0.5 used
    await limiter.admit(key)
    with pytest.raises(RateLimited):
        await limiter.admit(key)


async def test_redis_down_falls_back_to_counting_in_memory():
    import redis.asyncio as aioredis
    dead = aioredis.Redis.from_url("redis://127.0.0.1:1/0", socket_connect_timeout=0.2)
    limiter = RateLimiter(dead)
    key = Principal("a", "k", requests_per_minute=1)
    await limiter.admit(key)
    with pytest.raises(RateLimited):
        await limiter.admit(key)
    await dead.aclose()
