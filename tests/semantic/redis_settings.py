"""Settings of a gateway replica whose exact and semantic tiers live in a shared Redis."""
from __future__ import annotations

from tests.gateway.conftest import make_settings


def redis_settings(url: str, prefix: str, **semantic):
    return make_settings(cache={"exact": {"store": "redis"}, "semantic": {"store": "redis"} | semantic},
                         redis={"url": url, "key_prefix": prefix, "socket_timeout_s": 0.3,
                                "retry_interval_s": 0.2})
