"""A live gateway on a loopback port serving the real SmolLM2 engine, shared by the end-to-end tests."""
from __future__ import annotations

import openai
import pytest

from cachegate.api.app import create_app
from cachegate.settings import load_settings
from tests.support.live_server import LiveServer

MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="session")
def live_gateway():
    settings = load_settings(env={})      # the embedded defaults: memory cache, in-process SmolLM2
    with LiveServer(create_app(settings)) as server:
        yield server


@pytest.fixture
def client(live_gateway) -> openai.OpenAI:
    return openai.OpenAI(base_url=live_gateway.url + "/v1", api_key="unused", max_retries=0, timeout=120)
