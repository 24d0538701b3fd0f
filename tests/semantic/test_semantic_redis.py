"""Replicas on one real Redis share semantic entries: a hit through one, deletes followed by all."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

import httpx
import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.semantic.conftest import answer, ask
from tests.semantic.redis_settings import redis_settings
from tests.semantic.test_semantic_tier import PARAPHRASE, QUESTION
from tests.support.fake_backend import EchoBackend
from tests.support.polling import until
from tests.support.redis_server import RedisServer, free_port

pytestmark = pytest.mark.redis


@pytest.fixture
def prefix() -> str:
    return f"t{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def other_process(redis_url, prefix, tmp_path):
    port = free_port()
    log = tmp_path / "gateway.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tests.support.echo_gateway", str(port), redis_url, prefix],
                                cwd=os.getcwd(), stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        assert until(lambda: proc.poll() is not None or _up(url), 120), "the second gateway did not start"
        assert proc.poll() is None, log.read_text()[-3000:]
        yield httpx.Client(base_url=url, timeout=30)
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _up(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_two_gateway_processes_share_a_semantic_hit(redis_url, prefix, other_process, monkeypatch):
    monkeypatch.setenv("CACHEGATE_ADMIN_TOKEN", "secret")
    backend = EchoBackend()
    with TestClient(create_app(redis_settings(redis_url, prefix), backends={"echo": backend})) as here:
        tier = here.app.state.services.semantic
        first = ask(other_process, QUESTION)
        assert first.headers["x-cachegate-cache"] == "miss"
        assert until(lambda: len(tier.catalog) == 1), "this replica did not follow the other's insert"
        hit = ask(here, PARAPHRASE)
        assert hit.headers["x-cachegate-cache"] == "hit-semantic"
        assert answer(hit) == f"echo: {QUESTION}" and backend.calls == 0

        deleted = here.delete(f"/admin/semantic/entries/{hit.headers['x-cachegate-entry']}",
                              headers={"authorization": "Bearer secret"})
        assert deleted.json()["deleted"] == [hit.headers["x-cachegate-entry"]]
        assert until(lambda: ask(other_process, PARAPHRASE).headers["x-cachegate-cache"] != "hit-semantic")


def test_a_replica_started_later_loads_the_shared_entries(redis_url, prefix):
    with TestClient(create_app(redis_settings(redis_url, prefix), backends={"echo": EchoBackend()})) as one:
        ask(one, QUESTION)
    late = EchoBackend()
    with TestClient(create_app(redis_settings(redis_url, prefix), backends={"echo": late})) as two:
        assert ask(two, PARAPHRASE).headers["x-cachegate-cache"] == "hit-semantic"
        assert late.calls == 0


def test_redis_down_skips_the_semantic_tier_and_resyncs_after():
    backend = EchoBackend()
    with RedisServer() as redis, TestClient(create_app(redis_settings(redis.url, "o:"),
                                                        backends={"echo": backend})) as client:
        tier = client.app.state.services.semantic
        ask(client, QUESTION)
        redis.stop()
        for i in range(3):
            r = ask(client, PARAPHRASE + f" {i}" * i)
            assert r.status_code == 200 and r.headers["x-cachegate-cache"] == "miss"
        assert len(tier.catalog) == 1, "an outage must not wipe the catalog"
        redis.start()                                       # same port, empty
        assert until(lambda: tier.follower.synced.is_set() and len(tier.catalog) == 0, 15)
        ask(client, QUESTION + " again")
        assert ask(client, QUESTION + " again").headers["x-cachegate-cache"] == "hit-exact"
