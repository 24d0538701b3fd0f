"""Shared fixtures: offline hub, a real Redis (REDIS_URL from `make test`, or one started here)."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

from tests.support.redis_server import RedisServer  # noqa: E402


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The Redis the suite shares. Never skipped: without a server the Redis tests fail, loudly."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    with RedisServer() as server:
        yield server.url
