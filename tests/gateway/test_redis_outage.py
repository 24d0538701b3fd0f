"""Redis going away mid-test degrades the exact tier, never the requests; the tier resumes after."""
from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import chat, make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.redis


def redis_app(url: str, backend: EchoBackend):
    settings = make_settings(cache={"exact": {"store": "redis"}, "semantic": {"enabled": False}},
                             redis={"url": url, "socket_timeout_s": 0.3, "retry_interval_s": 0.2})
    return create_app(settings, backends={"echo": backend})


def test_exact_hits_are_shared_through_redis(redis_url):
    backend = EchoBackend()
    with TestClient(redis_app(redis_url, backend)) as one, TestClient(redis_app(redis_url, backend)) as two:
        chat(one, "shared between replicas")
        assert chat(two, "shared between replicas").headers["x-cachegate-cache"] == "hit-exact"
    assert backend.calls == 1


def test_requests_succeed_while_redis_is_down_and_hits_resume_after():
    backend = EchoBackend()
    with RedisServer() as redis, TestClient(redis_app(redis.url, backend)) as client:
        chat(client, "before the outage")
        assert chat(client, "before the outage").headers["x-cachegate-cache"] == "hit-exact"

        redis.stop()
        started = time.monotonic()
        for i in range(10):
            r = chat(client, f"during the outage {i % 2}")
            assert r.status_code == 200
            assert r.json()["choices"][0]["message"]["content"] == f"echo: during the outage {i % 2}"
            assert r.headers["x-cachegate-cache"] == "miss"
        assert time.monotonic() - started < 5, "a dead Redis must not slow every request down"
        assert client.get("/healthz").json()["status"] == "degraded"
        assert client.app.state.services.stores["exact"].failures >= 1

        redis.start()                  # same port, empty
        time.sleep(0.3)                # past the retry interval
        chat(client, "after the outage")
        r = chat(client, "after the outage")
        assert r.headers["x-cachegate-cache"] == "hit-exact"
        assert client.get("/healthz").json()["status"] == "ok"


def test_streaming_survives_redis_outage():
    backend = EchoBackend()
    with RedisServer() as redis, TestClient(redis_app(redis.url, backend)) as client:
        redis.stop()
        r = chat(client, "stream without redis", stream=True)
        assert r.status_code == 200
        assert r.text.rstrip().endswith("data: [DONE]")
