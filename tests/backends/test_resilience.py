"""Retries, circuit breaker, and the replica pool over scripted in-memory backends."""
from __future__ import annotations

import random

import pytest

from cachegate.backends.base import BackendRequest, Chunk, ModelInfo, Sampling
from cachegate.backends.pool import TierPool
from cachegate.backends.resilience import CircuitBreaker, ResilientBackend, RetryPolicy
from cachegate.errors import BackendRateLimited, BackendRejected, BackendUnavailable


class Scripted:
    """Fails as scripted ("429", "down", "reject", "die"), then answers its name."""

    def __init__(self, name: str, script=()) -> None:
        self.info = ModelInfo(name, "large", 1024)
        self.script = list(script)
        self.calls = 0

    async def start(self): ...

    async def close(self): ...

    async def generate(self, request):
        self.calls += 1
        action = self.script.pop(0) if self.script else "ok"
        if action == "429":
            raise BackendRateLimited("slow down", retry_after_s=0)
        if action == "down":
            raise BackendUnavailable("down")
        if action == "reject":
            raise BackendRejected("bad", status=400)
        yield Chunk(self.info.name)
        if action == "die":
            raise BackendUnavailable("died mid-stream")
        yield Chunk("", finish_reason="stop")


def req(content="hi", system="sys") -> BackendRequest:
    return BackendRequest(model="m", params=Sampling(),
                          messages=[{"role": "system", "content": system}, {"role": "user", "content": content}])


async def no_sleep(_):
    return None


async def text_of(backend, request=None) -> str:
    return "".join([c.text async for c in backend.generate(request or req())])


async def test_429_then_200_is_retried():
    inner = Scripted("a", ["429"])
    backend = ResilientBackend(inner, RetryPolicy(attempts=3), sleep=no_sleep)
    assert await text_of(backend) == "a"
    assert inner.calls == 2 and backend.retries == 1


async def test_gives_up_after_the_attempts():
    inner = Scripted("a", ["down"] * 5)
    backend = ResilientBackend(inner, RetryPolicy(attempts=3), sleep=no_sleep)
    with pytest.raises(BackendUnavailable):
        await text_of(backend)
    assert inner.calls == 3


async def test_request_errors_are_not_retried():
    inner = Scripted("a", ["reject"])
    with pytest.raises(BackendRejected):
        await text_of(ResilientBackend(inner, sleep=no_sleep))
    assert inner.calls == 1


async def test_no_retry_after_the_first_chunk():
    inner = Scripted("a", ["die"])
    backend = ResilientBackend(inner, sleep=no_sleep)
    seen = []
    with pytest.raises(BackendUnavailable):
        async for chunk in backend.generate(req()):
            seen.append(chunk.text)
    assert seen == ["a"] and inner.calls == 1
    assert backend.outstanding == 0


def test_backoff_grows_is_jittered_and_honours_retry_after():
    policy = RetryPolicy(base_delay_s=0.1, max_delay_s=2.0, jitter=0.5)
    rng = random.Random(0)
    delays = [policy.delay(a, rng=rng) for a in range(6)]
    assert all(0.05 <= d <= 3.0 for d in delays)
    assert delays[4] > delays[0]
    assert policy.delay(0, retry_after_s=1.5, rng=rng) >= 1.5
    assert len({round(policy.delay(1, rng=rng), 6) for _ in range(5)}) > 1


def test_breaker_opens_refuses_then_probes_once_before_closing():
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=3, reset_after_s=10, clock=lambda: now[0])
    for _ in range(3):
        assert breaker.allow()
        breaker.record_failure()
    assert breaker.state == "open" and not breaker.allow()
    now[0] = 10.0
    assert breaker.allow()             # the probe
    assert not breaker.allow()         # only one at a time
    breaker.record_success()
    assert breaker.state == "closed" and breaker.allow()


def test_failed_probe_reopens():
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=1, reset_after_s=5, clock=lambda: now[0])
    breaker.record_failure()
    now[0] = 6.0
    assert breaker.allow()
    breaker.record_failure()
    assert breaker.state == "open" and not breaker.allow()


async def test_open_breaker_skips_the_backend_without_calling_it():
    inner = Scripted("a", ["down"] * 10)
    backend = ResilientBackend(inner, RetryPolicy(attempts=1), CircuitBreaker(failure_threshold=2), no_sleep)
    for _ in range(2):
        with pytest.raises(BackendUnavailable):
            await text_of(backend)
    calls = inner.calls
    with pytest.raises(BackendUnavailable, match="circuit open"):
        await text_of(backend)
    assert inner.calls == calls


async def test_pool_fails_over_to_another_replica():
    dead, alive = Scripted("dead", ["down"] * 10), Scripted("alive")
    pool = TierPool("large", [ResilientBackend(dead, RetryPolicy(attempts=2), sleep=no_sleep),
                              ResilientBackend(alive, sleep=no_sleep)])
    for _ in range(3):
        assert await text_of(pool) == "alive"


async def test_pool_prefers_least_outstanding():
    a, b = ResilientBackend(Scripted("a")), ResilientBackend(Scripted("b"))
    pool = TierPool("small", [a, b])
    a.outstanding = 5
    assert pool.choose(req()) == 1


async def test_pool_keeps_a_conversation_on_its_replica():
    pool = TierPool("small", [ResilientBackend(Scripted(n)) for n in "abc"])
    first = await text_of(pool, req("q1", system="support bot"))
    for r in pool.replicas:           # the affine replica is now the busiest, within the slack
        r.outstanding = 1 if r.info.name == first else 0
    follow_up = req("q1", system="support bot")
    follow_up.messages += [{"role": "assistant", "content": "x"}, {"role": "user", "content": "q2"}]
    assert await text_of(pool, follow_up) == first


async def test_affinity_yields_to_a_much_busier_replica():
    pool = TierPool("small", [ResilientBackend(Scripted(n)) for n in "ab"])
    first = await text_of(pool, req("q", system="s"))
    index = "ab".index(first)
    pool.replicas[index].outstanding = 10
    assert pool.choose(req("q", system="s")) == 1 - index


async def test_pool_with_every_breaker_open_fails_fast():
    backends = [ResilientBackend(Scripted(n, ["down"] * 9), RetryPolicy(attempts=1),
                                 CircuitBreaker(failure_threshold=1), no_sleep) for n in "ab"]
    pool = TierPool("large", backends)
    with pytest.raises(BackendUnavailable):
        await text_of(pool)
    assert not pool.available
    with pytest.raises(BackendUnavailable, match="no replica"):
        await text_of(pool)
