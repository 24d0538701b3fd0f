"""Overload is refused at once, not queued for ever: a flood on a small engine (one running, two waiting)
gets quick 503s with `retry-after` for what does not fit, while the admitted requests are answered.
The real SmolLM2 engine, in process, through a live gateway."""
from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from cachegate.api.app import create_app
from cachegate.backends.inprocess import InProcessBackend
from cachegate.settings import ModelSettings, load_settings
from engine.async_engine import AsyncEngine
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.slow


async def test_a_flooded_engine_refuses_quickly_with_retry_after():
    engine = AsyncEngine.from_pretrained("packaged:smollm2-135m-instruct", max_num_seqs=1, max_waiting=2)
    backend = InProcessBackend(ModelSettings(name="smol"), engine=engine)
    settings = load_settings(env={}, overrides={"models": [{"name": "smol"}],
                                                "cache": {"exact": {"enabled": False}, "semantic": {"enabled": False}}})
    with LiveServer(create_app(settings, backends={"smol": backend})) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
            async def one(i: int):
                started = time.monotonic()
                r = await client.post("/v1/chat/completions", json={
                    "model": "smol", "max_tokens": 24, "temperature": 0,
                    "messages": [{"role": "user", "content": f"Count from {i} to {i + 50}."}]})
                return r, time.monotonic() - started
            first = asyncio.create_task(one(0))
            deadline = time.monotonic() + 60
            while engine.num_running == 0 and time.monotonic() < deadline:   # the one running seat taken, so
                await asyncio.sleep(0.01)                                   # the flood meets a full engine
            results = [*await asyncio.gather(*(one(i) for i in range(1, 10))), await first]
    answered = [t for r, t in results if r.status_code == 200]
    refused = [(r, t) for r, t in results if r.status_code == 503]
    assert len(answered) == 3 and len(refused) == 7
    assert all(int(r.headers["retry-after"]) >= 1 and "busy" in r.json()["error"]["message"]
               for r, _ in refused)
    assert max(t for _, t in refused) < min(answered), "a refused request waited behind the admitted ones"
