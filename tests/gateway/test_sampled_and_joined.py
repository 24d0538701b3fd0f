"""Sampled requests and shared backend calls, as a client sees them: a sampled answer is cached (or,
with `cache.sampled: skip`, never looked up nor stored), `seed` is part of the key; identical misses in
flight share one backend call and are counted as `joined`, with their tokens saved, not spent."""
from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import chat, make_settings
from tests.support.fake_backend import EchoBackend


def app(backend, **cache):
    return create_app(make_settings(cache={"semantic": {"enabled": False}} | cache), backends={"echo": backend})


def test_sampled_answers_are_stored_by_default_and_seed_is_part_of_the_key():
    backend = EchoBackend()
    with TestClient(app(backend)) as client:
        assert chat(client, "pick a color").headers["x-cachegate-cache"] == "miss"          # temperature 1
        assert chat(client, "pick a color").headers["x-cachegate-cache"] == "hit-exact"
        assert chat(client, "pick a color", seed=1).headers["x-cachegate-cache"] == "miss"
        assert chat(client, "pick a color", seed=2).headers["x-cachegate-cache"] == "miss"
        assert chat(client, "pick a color", seed=1).headers["x-cachegate-cache"] == "hit-exact"
    assert backend.calls == 3


def test_with_sampled_skip_only_deterministic_requests_touch_the_cache():
    backend = EchoBackend()
    with TestClient(app(backend, sampled="skip")) as client:
        sampled = [chat(client, "pick a color").headers["x-cachegate-cache"] for _ in range(2)]
        greedy = [chat(client, "pick a color", temperature=0).headers["x-cachegate-cache"] for _ in range(2)]
        seeded = [chat(client, "pick a color", temperature=0.7, seed=3).headers["x-cachegate-cache"]
                  for _ in range(2)]
    assert sampled == ["bypass", "bypass"]
    assert greedy == ["miss", "hit-exact"] and seeded == ["miss", "hit-exact"]
    assert backend.calls == 4


def test_requests_that_join_a_call_in_flight_are_joined_and_saved():
    backend = EchoBackend(delay_s=0.05)
    with TestClient(app(backend)) as client:
        barrier, results = threading.Barrier(10), []

        def one():
            barrier.wait()
            results.append(chat(client, "the same slow question", temperature=0))
        threads = [threading.Thread(target=one) for _ in range(10)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        outcomes = sorted(r.headers["x-cachegate-cache"] for r in results)
        metrics = client.get("/metrics").text
        stats = client.app.state.services.stats
    assert backend.calls == 1 and outcomes.count("miss") == 1
    assert outcomes.count("joined") + outcomes.count("hit-exact") == 9 and "joined" in outcomes
    assert all(r.headers["x-cachegate-single-flight"] == "joined"
               for r in results if r.headers["x-cachegate-cache"] == "joined")
    assert f'cache="joined",endpoint="chat",status="200",tier="small"}} {outcomes.count("joined")}.0' in metrics
    assert stats.tokens_saved["echo"] > 0 and sum(stats.routes.values()) == 1
