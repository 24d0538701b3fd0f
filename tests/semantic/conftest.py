"""Semantic-tier fixtures: the embedding model loaded once per session, apps over the stand-in backend."""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.cache.semantic.embedder import PACKAGED, load_model, resolve_precision
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend


@pytest.fixture(scope="session", autouse=True)
def embedding_model():
    """Load MiniLM once; every embedder in the session shares it (load_model memoises per process)."""
    return load_model(PACKAGED, resolve_precision("auto"))


@pytest.fixture
def backend() -> EchoBackend:
    return EchoBackend()


def semantic_app(backend: EchoBackend, **semantic):
    settings = make_settings(cache={"semantic": semantic})
    return create_app(settings, backends={"echo": backend})


@pytest.fixture
def client(backend):
    with TestClient(semantic_app(backend)) as c:
        yield c


@pytest.fixture
def tier(client):
    return client.app.state.services.semantic


def ask(client, content, *, system=None, history=(), model="echo", headers=None, **fields):
    messages = ([{"role": "system", "content": system}] if system else []) + list(history) + [
        {"role": "user", "content": content}]
    return client.post("/v1/chat/completions", json={"model": model, "messages": messages} | fields,
                       headers=headers or {})


def answer(response) -> str:
    return response.json()["choices"][0]["message"]["content"]
