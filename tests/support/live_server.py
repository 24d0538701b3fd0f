"""A live uvicorn server in a background thread on a free loopback port, for real-client tests."""
from __future__ import annotations

import threading
import time

import uvicorn
from fastapi import FastAPI

from tests.support.redis_server import free_port


class LiveServer:
    def __init__(self, app: FastAPI, settings=None) -> None:
        """With `settings`, uvicorn runs as `cachegate serve` runs it (its edge guards included)."""
        self.port = free_port()
        options = dict(host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=2)
        if settings is not None:
            from cachegate.commands.serve import uvicorn_config
            config = uvicorn_config(app, settings, **options)
        else:
            config = uvicorn.Config(app, **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the live server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
