"""With Redis configured, every replica's figures add up in one place: the dashboard of either
replica shows the traffic of both."""
from __future__ import annotations

import time
import uuid

import pytest
from fastapi.testclient import TestClient

from cachegate.api.app import create_app
from tests.admin.conftest import ADMIN, TOKEN, chat
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend

pytestmark = pytest.mark.redis


def replica(redis_url: str, prefix: str):
    settings = make_settings(admin={"token": TOKEN, "flush_interval_s": 0.1},
                             redis={"url": redis_url, "key_prefix": prefix},
                             cache={"exact": {"store": "redis"}, "semantic": {"enabled": False}})
    return TestClient(create_app(settings, backends={"echo": EchoBackend()}))


def test_stats_add_up_across_replicas(redis_url):
    prefix = f"fleet-{uuid.uuid4().hex[:8]}:"
    with replica(redis_url, prefix) as one, replica(redis_url, prefix) as two:
        chat(one, "first question")
        chat(one, "second question")
        chat(two, "first question")          # an exact hit through the shared store
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            totals = two.get("/admin/api/stats", headers=ADMIN).json()["totals"]
            if totals["requests"] == 3:
                break
            time.sleep(0.1)
        stats = two.get("/admin/api/stats", headers=ADMIN).json()
    assert stats["scope"] == "fleet"
    assert stats["totals"]["requests"] == 3
    assert stats["totals"]["by_cache"] == {"hit-exact": 1, "hit-curated": 0, "hit-semantic": 0, "joined": 0,
                                           "miss": 2, "bypass": 0, "error": 0}
