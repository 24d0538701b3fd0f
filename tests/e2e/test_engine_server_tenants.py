"""Tenants reach engine servers, and only from a gateway: an engine started with a gateway token serves
only that token's holder and takes the tenant it names, so prefix reuse stays within a tenant across the
gateway-engine hop; an open engine ignores a tenant header from any client. Real engine processes."""
from __future__ import annotations

import httpx
import openai
import pytest

from cachegate.api.app import create_app
from cachegate.settings import load_settings
from tests.support.engine_process import EngineProcess
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.slow
TOKEN = "engine-secret-for-tests"
SYSTEM = "You answer questions about the Larkspur hiking shop in one sentence, kindly and briefly. " * 4


def ask(client, question: str):
    return client.chat.completions.create(model="smol", temperature=0, max_tokens=2, messages=[
        {"role": "system", "content": SYSTEM}, {"role": "user", "content": question}])


def test_a_tokened_engine_keeps_tenants_apart_and_refuses_clients_without_the_token(monkeypatch):
    monkeypatch.setenv("ENGINE_TOKEN_FOR_TESTS", TOKEN)
    keys = [{"key": "sk-acme", "tenant": "acme"}, {"key": "sk-globex", "tenant": "globex"}]
    with EngineProcess("smol", token=TOKEN) as engine:
        model = {"name": "smol", "backend": "engine", "replicas": [engine.url], "api_key_env": "ENGINE_TOKEN_FOR_TESTS"}
        settings = load_settings(env={}, overrides={"models": [model], "auth": {"keys": keys},
                                                    "cache": {"exact": {"enabled": False}, "semantic": {"enabled": False}}})
        with LiveServer(create_app(settings)) as gateway:
            def client(key):
                return openai.OpenAI(base_url=gateway.url + "/v1", api_key=key, max_retries=0, timeout=60)
            acme_first = ask(client("sk-acme"), "Are you open on Sundays?")
            globex = ask(client("sk-globex"), "Do you repair tents?")
            acme_again = ask(client("sk-acme"), "Do you sell maps?")
        direct = httpx.post(engine.url + "/chat/completions", json={
            "model": "smol", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}, timeout=60)
    assert acme_first.usage.prompt_tokens_details.cached_tokens == 0
    assert globex.usage.prompt_tokens_details.cached_tokens == 0, "globex reused acme's prefix"
    assert acme_again.usage.prompt_tokens_details.cached_tokens >= 64
    assert direct.status_code == 401


def test_an_open_engine_ignores_tenant_headers_from_clients():
    with EngineProcess("smol") as engine:
        client = openai.OpenAI(base_url=engine.url, api_key="x", max_retries=0, timeout=60)
        first = client.chat.completions.create(
            model="smol", temperature=0, max_tokens=2, extra_headers={"x-cachegate-tenant": "acme"},
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Open on Sundays?"}])
        second = client.chat.completions.create(
            model="smol", temperature=0, max_tokens=2, extra_headers={"x-cachegate-tenant": "globex"},
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Repair tents?"}])
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    assert second.usage.prompt_tokens_details.cached_tokens >= 64     # one tenant: the header was not trusted
