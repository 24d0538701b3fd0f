"""Chaos drill: a backend that stalls. Its client gets a timeout error in bounded time, and the
gateway keeps answering other requests meanwhile."""
from __future__ import annotations

import asyncio
import time

import httpx

from cachegate.api.app import create_app
from tests.gateway.conftest import make_settings
from tests.support.fake_backend import EchoBackend
from tests.support.fake_upstream import FakeUpstream
from tests.support.live_server import LiveServer


async def test_stalled_backend_times_out_in_bounded_time_and_others_are_served():
    async with FakeUpstream() as upstream:
        upstream.script.extend(["stall"] * 10)
        models = [{"name": "echo", "tier": "small"},
                  {"name": "stuck", "tier": "large", "backend": "upstream", "replicas": [upstream.url],
                   "max_context": 4096, "read_timeout_s": 1.0, "retry": {"attempts": 2, "base_delay_s": 0.05}}]
        settings = make_settings(models=models, routing={"fallback": {}}, cache={"semantic": {"enabled": False}})
        with LiveServer(create_app(settings, backends=backends_of(settings))) as server:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
                def ask(model: str, text: str):
                    return client.post("/v1/chat/completions",
                                       json={"model": model, "messages": [{"role": "user", "content": text}]})
                started = time.monotonic()
                stuck = asyncio.create_task(ask("stuck", "hello?"))
                others = []
                while not stuck.done():
                    t0 = time.monotonic()
                    r = await ask("echo", f"still there {len(others)}?")
                    others.append((r.status_code, time.monotonic() - t0))
                    await asyncio.sleep(0.05)
                response = await stuck
                waited = time.monotonic() - started
    assert response.status_code == 504
    assert response.json()["error"]["type"] == "timeout_error"
    assert waited < 6, f"the stalled request took {waited:.1f} s (2 tries x 1 s read timeout + backoff)"
    assert len(others) >= 5 and all(code == 200 for code, _ in others)
    assert max(seconds for _, seconds in others) < 1.0, "the gateway stopped answering while one backend stalled"


def backends_of(settings):
    """The real upstream backend (retries, timeouts) for `stuck`, the stand-in for `echo`."""
    from cachegate.build import build_backends
    return build_backends(settings) | {"echo": EchoBackend()}
