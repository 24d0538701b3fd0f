"""`max_tokens` does not fragment the cache: a complete answer serves any request whose `max_tokens`
covers it, and is cut at a token boundary (`finish_reason: length`) for one that does not; a cut answer
serves requests asking for at most as many tokens. Both tiers."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

QUESTION = "how do I reset my email password please"      # the echo answers with 9 words


@pytest.fixture(params=["exact", "semantic"])
def tier(request):
    return request.param


@pytest.fixture
def client(tier, backend):
    cache = {"semantic": {"enabled": False}} if tier == "exact" else {
        "exact": {"enabled": False}, "semantic": {"policy": "cosine", "threshold": 0.9}}
    with TestClient(create_app(make_settings(cache=cache), backends={"echo": backend})) as c:
        yield c


@pytest.fixture
def backend():
    return EchoBackend()


def chat(client, max_tokens=None, content=QUESTION):
    body = {"model": "echo", "messages": [{"role": "user", "content": content}]}
    return client.post("/v1/chat/completions", json=body | ({"max_tokens": max_tokens} if max_tokens else {}))


def text(r) -> str:
    return r.json()["choices"][0]["message"]["content"]


def test_a_complete_answer_serves_larger_and_smaller_max_tokens(client, backend, tier):
    whole = chat(client, 64)
    assert whole.json()["choices"][0]["finish_reason"] == "stop" and whole.json()["usage"]["completion_tokens"] == 9
    larger = chat(client, 200)
    smaller = chat(client, 4)
    assert larger.headers["x-cachegate-cache"] == smaller.headers["x-cachegate-cache"] == f"hit-{tier}"
    assert text(larger) == text(whole)
    assert text(smaller) == "echo: how do I" and smaller.json()["choices"][0]["finish_reason"] == "length"
    assert smaller.json()["usage"]["completion_tokens"] == 4
    assert backend.calls == 1


def test_a_cut_answer_serves_only_requests_asking_for_at_most_as_many(client, backend, tier):
    cut = chat(client, 5)
    assert cut.json()["choices"][0]["finish_reason"] == "length"
    assert chat(client, 5).headers["x-cachegate-cache"] == f"hit-{tier}"
    shorter = chat(client, 3)
    assert shorter.headers["x-cachegate-cache"] == f"hit-{tier}" and text(shorter) == "echo: how do"
    longer = chat(client, 64)
    assert longer.headers["x-cachegate-cache"] == "miss" and longer.json()["choices"][0]["finish_reason"] == "stop"
    assert chat(client, 64).headers["x-cachegate-cache"] == f"hit-{tier}"     # the longer answer replaced it
    assert backend.calls == 2


def test_a_cut_answer_never_replaces_a_complete_one(client, backend, tier):
    chat(client, 64)
    client.post("/v1/chat/completions", headers={"cache-control": "no-cache"},
                json={"model": "echo", "max_tokens": 3, "messages": [{"role": "user", "content": QUESTION}]})
    again = chat(client, 64)
    assert again.headers["x-cachegate-cache"] == f"hit-{tier}"
    assert again.json()["choices"][0]["finish_reason"] == "stop"


def test_a_structured_answer_is_never_cut_a_longer_one_misses(client, backend, tier):
    fmt = {"response_format": {"type": "json_object"}}
    body = {"model": "echo", "messages": [{"role": "user", "content": QUESTION}]} | fmt
    client.post("/v1/chat/completions", json=body | {"max_tokens": 64})
    shorter = client.post("/v1/chat/completions", json=body | {"max_tokens": 4})
    assert shorter.headers["x-cachegate-cache"] == "miss"        # a cut would break the JSON
    assert client.post("/v1/chat/completions", json=body | {"max_tokens": 100}).headers[
        "x-cachegate-cache"] == f"hit-{tier}"
