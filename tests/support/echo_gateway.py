"""A gateway process over the stand-in backend, for tests that need a second replica in its own process.

`python -m tests.support.echo_gateway PORT REDIS_URL KEY_PREFIX` serves until killed.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(port: int, redis_url: str, prefix: str) -> None:
    import uvicorn

    from cachegate.api.app import create_app
    from tests.semantic.redis_settings import redis_settings
    from tests.support.fake_backend import EchoBackend
    app = create_app(redis_settings(redis_url, prefix), backends={"echo": EchoBackend()})
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
