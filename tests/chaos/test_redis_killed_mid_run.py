"""Chaos drill: Redis is killed in the middle of a run and restarted. No client request fails, and
exact hits resume once Redis is back. Loopback only, bounded in requests and time."""
from __future__ import annotations

import threading
import time
from collections import Counter

import httpx
import pytest

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.live_server import LiveServer
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.redis
QUESTIONS = [f"question number {i}" for i in range(8)]


def load(url: str, stop: threading.Event, results: list, max_requests: int = 400) -> None:
    with httpx.Client(timeout=10) as client:
        i = 0
        while not stop.is_set() and i < max_requests:
            body = {"model": "echo", "messages": [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]}
            try:
                r = client.post(url + "/v1/chat/completions", json=body)
                results.append((time.monotonic(), r.status_code, r.headers.get("x-cachegate-cache")))
            except httpx.HTTPError as exc:
                results.append((time.monotonic(), type(exc).__name__, None))
            i += 1
            time.sleep(0.01)


def wait_for(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.05)


def test_redis_killed_and_restarted_mid_run():
    with RedisServer() as redis:
        settings = make_settings(cache={"exact": {"store": "redis"}, "semantic": {"store": "redis"}},
                                 redis={"url": redis.url, "socket_timeout_s": 0.3, "retry_interval_s": 0.3})
        with LiveServer(create_app(settings, backends={"echo": EchoBackend()})) as server:
            stop, results = threading.Event(), []
            worker = threading.Thread(target=load, args=(server.url, stop, results))
            worker.start()
            wait_for(lambda: sum(c == "hit-exact" for _, _, c in results) >= 5)
            redis.stop()
            killed = time.monotonic()
            time.sleep(1.0)
            redis.start()
            restarted = time.monotonic()
            time.sleep(2.0)
            stop.set()
            worker.join(timeout=30)
    statuses = Counter(status for _, status, _ in results)
    assert statuses == {200: len(results)}, f"failed requests: {statuses}"
    before = [c for t, _, c in results if t < killed]
    after = [c for t, _, c in results if t > restarted + 1.0]
    assert "hit-exact" in before
    assert after and after.count("hit-exact") > len(after) / 2, "exact hits did not resume after the restart"
