"""Oversized input is refused with a 400 before any work: message count, prompt size, max_tokens,
body size; and nothing already stored is lost."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend


@pytest.fixture
def backend():
    return EchoBackend()


@pytest.fixture
def client(backend):
    settings = make_settings(limits={"max_messages": 4, "max_prompt_chars": 100, "max_tokens": 50},
                             server={"max_body_bytes": 4096}, cache={"semantic": {"enabled": False}})
    with TestClient(create_app(settings, backends={"echo": backend})) as c:
        yield c


def chat(client, messages, **kw):
    return client.post("/v1/chat/completions", json={"model": "echo", "messages": messages} | kw)


@pytest.mark.parametrize("messages,kw,param", [
    ([{"role": "user", "content": "hi"}] * 5, {}, "messages"),
    ([{"role": "user", "content": "x" * 101}], {}, "messages"),
    ([{"role": "user", "content": "hi"}], {"max_tokens": 51}, "max_tokens"),
    ([{"role": "user", "content": "hi"}], {"max_completion_tokens": 51}, "max_completion_tokens"),
])
def test_oversized_input_is_refused_before_any_work(client, backend, messages, kw, param):
    r = chat(client, messages, **kw)
    assert r.status_code == 400 and r.json()["error"]["param"] == param
    assert backend.calls == 0


def test_oversized_completion_prompt(client, backend):
    r = client.post("/v1/completions", json={"model": "echo", "prompt": "y" * 101})
    assert r.status_code == 400 and r.json()["error"]["param"] == "prompt" and backend.calls == 0


def test_oversized_body_is_413(client, backend):
    r = chat(client, [{"role": "user", "content": "z" * 5000}])
    assert r.status_code == 413 and backend.calls == 0


def test_refusals_lose_nothing_already_stored(client):
    chat(client, [{"role": "user", "content": "kept"}])
    chat(client, [{"role": "user", "content": "hi"}] * 9)
    assert chat(client, [{"role": "user", "content": "kept"}]).headers["x-cachegate-cache"] == "hit-exact"
