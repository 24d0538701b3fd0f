"""Tool calls an upstream returns reach the client in OpenAI's shape, JSON and stream, through the real
`openai` client; such answers are cached only when the request is greedy, under a key that holds the
tools, and replay as the same calls."""
from __future__ import annotations

import json

import openai
import pytest

from cachegate.api.app import create_app
from cachegate.settings import load_settings
from tests.support.fake_upstream import FakeUpstream
from tests.support.live_server import LiveServer

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                           "parameters": {"type": "object",
                                                          "properties": {"city": {"type": "string"}}}}}]
ASK = [{"role": "user", "content": "What is the weather in Paris and in Lyon?"}]
CALLS = [("call_paris", "get_weather", {"city": "Paris"}), ("call_lyon", "get_weather", {"city": "Lyon"})]


def gateway(upstream: FakeUpstream) -> LiveServer:
    model = {"name": "up", "backend": "upstream", "replicas": [upstream.url], "max_context": 4096}
    settings = load_settings(env={}, overrides={"models": [model], "cache": {"semantic": {"enabled": False}}})
    return LiveServer(create_app(settings))


def calls_of(tool_calls) -> list[tuple]:
    return [(c.id, c.function.name, json.loads(c.function.arguments)) for c in tool_calls]


@pytest.fixture
async def upstream():
    async with FakeUpstream() as server:
        yield server


async def test_tool_calls_pass_through_as_json_and_replay_from_the_exact_tier(upstream):
    upstream.script.extend(["tool"])
    with gateway(upstream) as server:
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        fresh = await client.chat.completions.with_raw_response.create(
            model="up", messages=ASK, tools=TOOLS, temperature=0)
        again = await client.chat.completions.with_raw_response.create(
            model="up", messages=ASK, tools=TOOLS, temperature=0)
        other_tools = await client.chat.completions.with_raw_response.create(
            model="up", messages=ASK, tools=TOOLS + [{"type": "function", "function": {"name": "noop"}}],
            temperature=0)
    first = fresh.parse().choices[0]
    assert first.finish_reason == "tool_calls" and first.message.content is None
    assert calls_of(first.message.tool_calls) == CALLS
    assert upstream.requests[0]["tools"] == TOOLS
    assert again.headers["x-cachegate-cache"] == "hit-exact"
    assert calls_of(again.parse().choices[0].message.tool_calls) == CALLS
    assert again.parse().choices[0].finish_reason == "tool_calls"
    assert other_tools.headers["x-cachegate-cache"] == "miss"     # the key holds the tools


async def test_tool_calls_stream_as_deltas_fresh_and_replayed(upstream):
    upstream.script.extend(["tool"])
    with gateway(upstream) as server:
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        streams = []
        for _ in range(2):
            async with client.chat.completions.stream(model="up", messages=ASK, tools=TOOLS,
                                                      temperature=0) as stream:
                streams.append(await stream.get_final_completion())
    for completion in streams:
        choice = completion.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert calls_of(choice.message.tool_calls) == CALLS
    assert len(upstream.requests) == 1                       # the second came from the cache


async def test_sampled_tool_calls_are_not_cached(upstream):
    upstream.script.extend(["tool", "tool"])
    with gateway(upstream) as server:
        client = openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        for _ in range(2):
            r = await client.chat.completions.with_raw_response.create(
                model="up", messages=ASK, tools=TOOLS, temperature=0.8)
            assert calls_of(r.parse().choices[0].message.tool_calls) == CALLS
    assert r.headers["x-cachegate-cache"] == "miss" and len(upstream.requests) == 2
