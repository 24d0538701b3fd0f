"""The exact tier through the app: same request, same answer, from the cache; anything else misses."""
from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.backends.base import BackendRequest, Sampling
from cachegate.cache.keys import exact_key
from tests.gateway.conftest import chat, make_settings


def sse_events(response) -> list:
    lines = [line for line in response.text.split("\n") if line.startswith("data: ")]
    return [line[6:] if line == "data: [DONE]" else json.loads(line[6:]) for line in lines]


def test_second_identical_request_is_an_exact_hit(client, backend):
    first = chat(client, "what is a cache?")
    second = chat(client, "what is a cache?")
    assert first.headers["x-cachegate-cache"] == "miss"
    assert second.headers["x-cachegate-cache"] == "hit-exact"
    assert second.json()["choices"][0]["message"]["content"] == first.json()["choices"][0]["message"]["content"]
    assert second.json()["usage"] == first.json()["usage"]
    assert backend.calls == 1
    assert second.headers["x-cachegate-key"] == first.headers["x-cachegate-key"]


def test_hit_has_the_shape_of_a_fresh_answer(client):
    fresh = chat(client, "shape").json()
    cached = chat(client, "shape").json()
    assert set(cached) == set(fresh)
    assert cached["object"] == "chat.completion"
    assert cached["id"] != fresh["id"]
    assert cached["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("change", [
    {"temperature": 0.5}, {"top_p": 0.9}, {"seed": 7}, {"stop": ["x"]}, {"top_k": 5},
    {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
    {"tool_choice": "none"}, {"response_format": {"type": "json_object"}},
])
def test_any_answer_changing_parameter_misses(client, change):
    chat(client, "same words")
    assert chat(client, "same words", **change).headers["x-cachegate-cache"] == "miss"


def test_stream_flag_and_user_do_not_change_the_key(client):
    chat(client, "stream me")
    r = chat(client, "stream me", stream=True, user="someone")
    assert r.headers["x-cachegate-cache"] == "hit-exact"


def test_system_prompt_is_part_of_the_key(client):
    def with_system(system: str):
        messages = [{"role": "system", "content": system}, {"role": "user", "content": "hi"}]
        return client.post("/v1/chat/completions", json={"model": "echo", "messages": messages})
    with_system("be brief")
    assert with_system("be verbose").headers["x-cachegate-cache"] == "miss"
    assert with_system("be brief").headers["x-cachegate-cache"] == "hit-exact"


def test_earlier_turns_are_part_of_the_key(client):
    def convo(first_answer: str):
        messages = [{"role": "user", "content": "who?"}, {"role": "assistant", "content": first_answer},
                    {"role": "user", "content": "how old is he?"}]
        return client.post("/v1/chat/completions", json={"model": "echo", "messages": messages})
    convo("Einstein")
    assert convo("Newton").headers["x-cachegate-cache"] == "miss"


def test_text_parts_and_plain_string_share_a_key(client):
    chat(client, "parts")
    r = chat(client, [{"type": "text", "text": "pa"}, {"type": "text", "text": "rts"}])
    assert r.headers["x-cachegate-cache"] == "hit-exact"


def test_key_covers_tenant_and_model():
    def key(**kw):
        base = dict(model="m", params=Sampling(), messages=[{"role": "user", "content": "x"}])
        return exact_key("chat", BackendRequest(**(base | kw)))
    assert key() == key()
    assert key(tenant="acme") != key(tenant="globex")
    assert key(model="other") != key()
    assert exact_key("completions", BackendRequest(model="m", params=Sampling(), prompt="x")) != key()


def test_streamed_hit_streams_the_stored_answer(client):
    fresh = chat(client, "stream this", stream=True, stream_options={"include_usage": True})
    cached = chat(client, "stream this", stream=True, stream_options={"include_usage": True})
    assert cached.headers["x-cachegate-cache"] == "hit-exact"
    assert cached.headers["content-type"].startswith("text/event-stream")
    for response in (fresh, cached):
        events = sse_events(response)
        assert events[-1] == "[DONE]"
        assert events[0]["choices"][0]["delta"]["role"] == "assistant"
        usage = events[-2]
        assert usage["choices"] == [] and usage["usage"]["completion_tokens"] == 3
        text = "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-2])
        assert text == "echo: stream this"
        assert events[-3]["choices"][0]["finish_reason"] == "stop"


def test_usage_chunk_only_when_asked(client):
    events = sse_events(chat(client, "no usage", stream=True))
    assert all("usage" not in e for e in events[:-1])


def test_completions_endpoint_caches_too(client, backend):
    body = {"model": "echo", "prompt": "def add(a, b):", "max_tokens": 8}
    first = client.post("/v1/completions", json=body)
    second = client.post("/v1/completions", json=body)
    assert first.json()["object"] == "text_completion"
    assert second.headers["x-cachegate-cache"] == "hit-exact"
    assert second.json()["choices"][0]["text"] == first.json()["choices"][0]["text"] == "echo: def add(a, b):"
    assert backend.calls == 1


def test_truncated_answers_replay_for_the_same_max_tokens_only(client, backend):
    backend.finish_reason = "length"
    chat(client, "long answer", max_tokens=2)
    again = chat(client, "long answer", max_tokens=2)
    assert again.headers["x-cachegate-cache"] == "hit-exact"
    assert again.json()["choices"][0]["finish_reason"] == "length"
    assert chat(client, "long answer", max_tokens=3).headers["x-cachegate-cache"] == "miss"


def test_truncated_answers_can_be_kept_out_of_the_exact_tier(backend):
    settings = make_settings(cache={"exact": {"store_truncated": False}})
    backend.finish_reason = "length"
    with TestClient(create_app(settings, backends={"echo": backend})) as client:
        chat(client, "long answer")
        assert chat(client, "long answer").headers["x-cachegate-cache"] == "miss"
    assert backend.calls == 2


def test_stream_that_dies_midway_ends_with_an_error_event_and_is_not_stored(client, backend):
    backend.fail_after_chunks = 1
    events = sse_events(chat(client, "one two three", stream=True))
    assert "error" in events[-1]
    assert events[-1]["error"]["type"] == "server_error"
    backend.fail_after_chunks = None
    assert chat(client, "one two three").headers["x-cachegate-cache"] == "miss"


def test_models_lists_the_configured_models(client):
    data = client.get("/v1/models").json()
    assert data["object"] == "list"
    assert [m["id"] for m in data["data"]] == ["echo"]


def test_healthz(client):
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["stores"] == {"exact": "up", "semantic": "up"}
