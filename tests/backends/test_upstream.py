"""The upstream client against a scripted OpenAI-compatible server on loopback."""
from __future__ import annotations

import time

import pytest

from cachegate.backends.base import BackendRequest, ModelInfo, Sampling
from cachegate.backends.upstream import UpstreamBackend
from cachegate.errors import BackendRateLimited, BackendRejected, BackendTimeout, BackendUnavailable
from tests.support.fake_upstream import FakeUpstream
from tests.support.redis_server import free_port


def request(**kw) -> BackendRequest:
    base = dict(model="up", params=Sampling(max_tokens=8, temperature=0, stop=["END"]),
                messages=[{"role": "user", "content": "hi"}])
    return BackendRequest(**(base | kw))


async def collect(backend, req):
    return [c async for c in backend.generate(req)]


@pytest.fixture
async def upstream():
    async with FakeUpstream("one two three") as server:
        yield server


@pytest.fixture
async def backend(upstream):
    b = UpstreamBackend(ModelInfo("up", "large", 4096), upstream.url, upstream_model="real-name",
                        read_timeout_s=0.5)
    yield b
    await b.close()


async def test_streams_chunks_with_usage_on_the_last(backend, upstream):
    chunks = await collect(backend, request())
    assert "".join(c.text for c in chunks) == "one two three"
    assert chunks[-1].finish_reason == "stop"
    assert chunks[-1].usage.completion_tokens == 3
    assert chunks[-1].usage.cached_tokens == 4          # OpenAI's prompt_tokens_details, carried through
    sent = upstream.requests[0]
    assert sent["model"] == "real-name" and sent["stream"] is True and sent["stop"] == ["END"]
    assert sent["temperature"] == 0 and sent["max_tokens"] == 8


async def test_completions_go_to_the_completions_route(backend, upstream):
    chunks = await collect(backend, request(messages=None, prompt="def f():"))
    assert "".join(c.text for c in chunks) == "one two three"
    assert upstream.requests[0]["prompt"] == "def f():"


async def test_429_and_500_are_retryable_errors(backend, upstream):
    upstream.script.extend(["429", "500"])
    with pytest.raises(BackendRateLimited) as exc:
        await collect(backend, request())
    assert exc.value.retryable and exc.value.retry_after_s == 0
    with pytest.raises(BackendUnavailable):
        await collect(backend, request())


async def test_400_is_passed_through_and_not_retryable(backend, upstream):
    upstream.script.append("400")
    with pytest.raises(BackendRejected) as exc:
        await collect(backend, request())
    assert not exc.value.retryable
    assert exc.value.status == 400 and exc.value.param == "temperature"


async def test_stall_is_a_timeout_in_bounded_time(backend, upstream):
    upstream.script.append("stall")
    started = time.monotonic()
    with pytest.raises(BackendTimeout):
        await collect(backend, request())
    assert time.monotonic() - started < 5


async def test_stream_cut_mid_answer_raises(backend, upstream):
    upstream.script.append("die")
    with pytest.raises(BackendUnavailable):
        await collect(backend, request())


async def test_unreachable_upstream_is_unavailable():
    dead = UpstreamBackend(ModelInfo("dead", "large", 4096), f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(BackendUnavailable):
        await collect(dead, request())
    await dead.close()
