"""Redis that answers but refuses writes (out of memory under `noeviction`, a read-only replica) and
Redis restarted: every request is still served, `/healthz` says `degraded` while it lasts and `ok` again
on its own (an idle replica too), the limiter counts in one place, and once Redis is back the exact tier
answers first. A private redis-server per test; loopback only."""
from __future__ import annotations

import httpx
import pytest
import redis

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer
from tests.support.polling import until
from tests.support.redis_server import RedisServer, free_port

pytestmark = pytest.mark.redis


def settings_for(url: str, **extra):
    return make_settings(cache={"exact": {"store": "redis"}, "semantic": {"store": "redis", "policy": "cosine"}},
                         redis={"url": url, "socket_timeout_s": 0.3, "retry_interval_s": 0.2}, **extra)


def ask(url: str, content: str, stream: bool = False, key: str | None = None) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return httpx.post(url + "/v1/chat/completions", headers=headers, timeout=10, json={
        "model": "echo", "stream": stream, "messages": [{"role": "user", "content": content}]})


def health(url: str) -> str:
    return httpx.get(url + "/healthz").json()["status"]


def out_of_memory(r: redis.Redis) -> None:
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", "1")


def read_only(r: redis.Redis) -> None:
    r.replicaof("127.0.0.1", str(free_port()))      # a master that does not exist: writes get READONLY


def recover(r: redis.Redis) -> None:
    r.config_set("maxmemory", "0")
    r.replicaof("NO", "ONE")


@pytest.mark.parametrize("refuse", [out_of_memory, read_only], ids=["oom-noeviction", "read-only-replica"])
def test_a_redis_refusing_writes_degrades_and_recovers_without_failing_a_request(refuse):
    with RedisServer() as server:
        r = redis.Redis.from_url(server.url)
        keys = [{"key": "sk-l", "tenant": "l", "requests_per_minute": 5}, {"key": "sk-w", "tenant": "w"}]
        with LiveServer(create_app(settings_for(server.url, auth={"keys": keys}),
                                   backends={"echo": EchoBackend()})) as gateway:
            assert ask(gateway.url, "warm up", key="sk-w").status_code == 200
            refuse(r)
            plain = ask(gateway.url, "a question while redis refuses writes", key="sk-l")
            streamed = ask(gateway.url, "another question while redis refuses writes", stream=True, key="sk-l")
            assert plain.status_code == 200 and plain.json()["choices"][0]["message"]["content"]
            assert streamed.status_code == 200 and '"error"' not in streamed.text and "[DONE]" in streamed.text
            assert health(gateway.url) == "degraded"
            codes = [ask(gateway.url, f"more {i}", key="sk-l").status_code for i in range(10)]
            assert codes.count(200) == 3 and codes.count(429) == 7, "the limiter lost count (5 per minute)"
            recover(r)
            assert until(lambda: health(gateway.url) == "ok"), "healthz stayed degraded with redis back"


def test_after_a_redis_restart_an_idle_replica_turns_healthy_and_the_exact_tier_answers_first():
    with RedisServer() as server:
        with LiveServer(create_app(settings_for(server.url), backends={"echo": EchoBackend()})) as gateway:
            ask(gateway.url, "What are your opening hours?")
            redis.Redis.from_url(server.url).save()      # the restarted server loads this snapshot
            server.stop()
            assert ask(gateway.url, "asked while redis is down").status_code == 200
            assert health(gateway.url) == "degraded"
            server.start()
            assert until(lambda: health(gateway.url) == "ok", 5.0), "no background probe"
            again = ask(gateway.url, "What are your opening hours?")
            assert again.headers["x-cachegate-cache"] == "hit-exact"
