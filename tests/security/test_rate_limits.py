"""Per-key limits on requests and tokens per minute answer 429 with retry-after; in Redis they hold
across replicas; a sliding window lets the budget come back."""
from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient

from cachegate.access.auth import Principal
from cachegate.access.ratelimit import RateLimiter
from cachegate.api.app import create_app
from cachegate.errors import RateLimited
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


@pytest.mark.redis
async def test_concurrent_requests_cannot_all_pass_the_check_before_any_is_counted(redis_url):
    import asyncio

    import httpx

    from tests.support.live_server import LiveServer
    extra = {"redis": {"url": redis_url, "key_prefix": f"race-{uuid.uuid4().hex[:8]}:"}}
    keys = [{"key": "sk-r", "tenant": "r", "requests_per_minute": 5}]
    settings = make_settings(auth={"keys": keys}, cache={"semantic": {"enabled": False}}, **extra)
    with LiveServer(create_app(settings, backends={"echo": EchoBackend(delay_s=0.05)})) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=30,
                                     headers={"authorization": "Bearer sk-r"}) as client:
            replies = await asyncio.gather(*(client.post("/v1/chat/completions", json={
                "model": "echo", "messages": [{"role": "user", "content": f"q{i}"}]}) for i in range(50)))
    codes = [r.status_code for r in replies]
    assert codes.count(200) == 5 and codes.count(429) == 45


def test_streams_cut_by_their_clients_are_charged_what_they_produced():
    keys = [{"key": "sk-s", "tenant": "s", "tokens_per_minute": 40}]
    settings = make_settings(auth={"keys": keys}, cache={"exact": {"enabled": False},
                                                         "semantic": {"enabled": False}})
    long_question = " ".join(f"word{i}" for i in range(30))
    codes = []
    with TestClient(create_app(settings, backends={"echo": EchoBackend(delay_s=0.01)})) as client:
        for i in range(12):
            with client.stream("POST", "/v1/chat/completions", headers={"authorization": "Bearer sk-s"},
                               json={"model": "echo", "stream": True, "max_tokens": 60,
                                     "messages": [{"role": "user", "content": f"{i} {long_question}"}]}) as r:
                codes.append(r.status_code)
                if r.status_code == 200:
                    lines = r.iter_lines()
                    for _ in range(6):               # the role chunk and a few words, then hang up
                        next(lines)
        limiter = client.app.state.services.limiter
        charged = sum(v for (subject, _), v in limiter.local.counts.items() if subject.endswith(":tok"))
    assert 429 in codes, f"cut streams were never charged: {codes}"
    assert 0 < charged < 12 * 60, "a cut stream is charged what it produced, not its whole reservation"


async def test_redis_refusing_writes_counts_the_whole_step_in_memory(redis_url):
    """A Redis that reads but refuses writes (here: a script error) must not admit everything."""
    import redis.asyncio as aioredis
    client = aioredis.Redis.from_url(redis_url)
    limiter = RateLimiter(client, prefix=f"ro-{uuid.uuid4().hex[:8]}:")
    limiter.shared.script = _failing_script
    key = Principal("a", "k", requests_per_minute=5)
    admitted = 0
    for _ in range(20):
        try:
            await limiter.admit(key)
            admitted += 1
        except RateLimited:
            pass
    await client.aclose()
    assert admitted == 5 and limiter.redis_failures == 20


async def _failing_script(**_):
    from redis.exceptions import ReadOnlyError
    raise ReadOnlyError("You can't write against a read only replica.")
