"""Two engine servers as real subprocesses behind the gateway: killing or stalling the large one
degrades to the small one without a client error; an open breaker skips it at once; a stream cut
mid-answer ends with an error event; a 429 then 200 upstream is retried; an engine's prefix reuse
reaches the client as usage.prompt_tokens_details.cached_tokens."""
from __future__ import annotations

import time

import openai
import pytest

from cachegate.api.app import create_app
from cachegate.settings import load_settings
from tests.support.engine_process import EngineProcess
from tests.support.fake_upstream import FakeUpstream
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.slow
COMPLEX = "Prove step by step that there are infinitely many primes, and compare two proofs."


def engine_model(name: str, tier: str, url: str, **kw) -> dict:
    return {"name": name, "tier": tier, "backend": "engine", "replicas": [url], "read_timeout_s": 3.0,
            "connect_timeout_s": 1.0, "retry": {"attempts": 2, "base_delay_s": 0.05},
            "breaker": {"failure_threshold": 2, "reset_after_s": 60}} | kw


def gateway_for(*models: dict) -> LiveServer:
    settings = load_settings(env={}, overrides={"models": list(models),
                                                "cache": {"semantic": {"enabled": False}}})
    return LiveServer(create_app(settings))


def ask(client, content=COMPLEX, **kw):
    return client.chat.completions.with_raw_response.create(
        model="auto", messages=[{"role": "user", "content": content}], temperature=0, max_tokens=8, **kw)


@pytest.fixture(scope="module")
def engine_pair():
    with EngineProcess("small-engine") as small, EngineProcess("large-engine") as large:
        yield small, large


@pytest.fixture
def engines(engine_pair):
    """Both engines up: a test that killed the large one left it for this fixture to restart."""
    small, large = engine_pair
    if large.proc.poll() is not None:
        large.start()
    return small, large


def client_of(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=60)


def test_engine_servers_prefix_reuse_reaches_the_client_through_the_gateway(engines):
    """usage.prompt_tokens_details.cached_tokens: counted by the engine process, carried over HTTP."""
    small, _ = engines
    system = "You answer questions about the Larkspur hiking shop in one sentence, kindly and briefly. " * 4
    with gateway_for(engine_model("small-engine", "small", small.url)) as server:
        client = client_of(server)
        replies = [client.chat.completions.create(
            model="small-engine", temperature=0, max_tokens=4,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": question}])
            for question in ("Are you open on Sundays?", "Do you repair tents?")]
    assert replies[0].usage.prompt_tokens_details.cached_tokens == 0
    assert replies[1].usage.prompt_tokens_details.cached_tokens >= 64


def test_stalled_large_engine_falls_back_and_the_open_breaker_skips_it(engines):
    small, large = engines
    with gateway_for(engine_model("small-engine", "small", small.url),
                     engine_model("large-engine", "large", large.url)) as server:
        client = client_of(server)
        assert ask(client, COMPLEX + " (1)").headers["x-cachegate-route"] == "auto:large:large-engine"
        large.pause()
        try:
            first = ask(client, COMPLEX + " (2)")           # waits out the read timeout, then falls back
            assert first.headers["x-cachegate-route"] == "auto:large:small-engine;fallback-from=large-engine"
            started = time.monotonic()
            again = ask(client, COMPLEX + " (3)")              # breaker open: no wait at all
            assert time.monotonic() - started < 2.0, "an open breaker must not wait for the read timeout (3 s)"
            assert again.parse().choices[0].message.content
            assert "fallback-from=large-engine" in again.headers["x-cachegate-route"]
        finally:
            large.resume()


def test_killing_the_large_engine_mid_run_sends_later_requests_to_the_small_one(engines):
    small, large = engines
    with gateway_for(engine_model("small-engine", "small", small.url),
                     engine_model("large-engine", "large", large.url)) as server:
        client = client_of(server)
        routes = [ask(client, f"{COMPLEX} ({i})").headers["x-cachegate-route"] for i in range(2)]
        large.kill()
        for i in range(2, 6):
            r = ask(client, f"{COMPLEX} ({i})")           # no client error
            routes.append(r.headers["x-cachegate-route"])
            assert r.parse().choices[0].message.content
    assert routes[:2] == ["auto:large:large-engine"] * 2
    assert all(route.endswith("small-engine;fallback-from=large-engine") for route in routes[2:])


def test_stream_cut_after_the_first_chunk_ends_with_an_error_event(engines):
    small, large = engines
    with gateway_for(engine_model("small-engine", "small", small.url),
                     engine_model("large-engine", "large", large.url)) as server:
        stream = client_of(server).chat.completions.create(
            model="large", messages=[{"role": "user", "content": "Tell me a long story about a dragon."}],
            temperature=0, max_tokens=400, stream=True)
        received = []
        with pytest.raises(openai.APIError):
            for chunk in stream:
                received.append(chunk)
                if len(received) == 2:
                    large.kill()
        assert len(received) >= 2


async def test_upstream_answering_429_then_200_is_retried():
    async with FakeUpstream("fine thanks") as upstream:
        upstream.script.extend(["429"])
        model = {"name": "up", "tier": "small", "backend": "upstream", "replicas": [upstream.url],
                 "max_context": 4096, "retry": {"attempts": 3, "base_delay_s": 0.01}}
        with gateway_for(model) as server:
            client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
            r = await client.chat.completions.create(model="up", messages=[{"role": "user", "content": "hi"}])
        assert r.choices[0].message.content == "fine thanks"
        assert len(upstream.requests) == 2
