"""Gateway fixtures: an app over the stand-in backend, with the memory store or a real Redis."""
from __future__ import annotations

import os

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from cachegate.settings import deep_merge, load_settings
from tests.support.fake_backend import EchoBackend


def make_settings(**overrides):
    """Settings for a test app; of the environment only CACHEGATE_ADMIN_TOKEN is read (tests set it).
    Shadow checks (random background re-asks) are off unless a test turns them on."""
    base = deep_merge({"models": [{"name": "echo"}], "cache": {"semantic": {"verify_rate": 0.0}}}, overrides)
    env = {k: v for k, v in os.environ.items() if k == "CACHEGATE_ADMIN_TOKEN"}
    return load_settings(env=env, overrides=base)


@pytest.fixture
def backend() -> EchoBackend:
    return EchoBackend()


@pytest.fixture
def client(backend):
    app = create_app(make_settings(), backends={"echo": backend})
    with TestClient(app) as c:
        yield c


def chat(client, content="hello there", **fields):
    body = {"model": "echo", "messages": [{"role": "user", "content": content}]} | fields
    return client.post("/v1/chat/completions", json=body)
