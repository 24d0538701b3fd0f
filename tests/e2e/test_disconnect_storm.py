"""Chaos drill on the real engine: 200 streaming clients that hang up mid-answer. Every request is
abandoned, the engine ends with nothing running or waiting and no KV block in use, and the process's
memory comes back to where it was (within allocator slack)."""
from __future__ import annotations

import asyncio
import gc
import random
import time

import httpx
import pytest

from cachegate.telemetry.health import replicas_health
from tests.e2e.conftest import MODEL

pytestmark = pytest.mark.slow
CLIENTS, CONCURRENCY = 200, 50
SLACK_BYTES = 96 * 2**20


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return kb * 1024


def engine_state(live_gateway) -> dict:
    services = live_gateway.server.config.app.state.services
    return next(row["engine"] for row in replicas_health(services.gateway.backends) if row["model"] == MODEL)


async def hang_up_midway(client: httpx.AsyncClient, i: int, gate: asyncio.Semaphore, rng: random.Random) -> str:
    body = {"model": MODEL, "stream": True, "max_tokens": 64, "temperature": 0,
            "messages": [{"role": "user", "content": f"Storm {i}: tell me a long story about the number {i}."}]}
    async with gate:
        async with client.stream("POST", "/v1/chat/completions", json=body,
                                 headers={"cache-control": "no-store"}) as response:
            chunks_wanted = rng.choice([0, 1, 2, 3])        # some hang up before the first token
            async for _ in response.aiter_lines():
                chunks_wanted -= 1
                if chunks_wanted < 0:
                    break
    return "closed"


async def storm(url: str) -> list[str]:
    rng, gate = random.Random(7), asyncio.Semaphore(CONCURRENCY)
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        return await asyncio.gather(*(hang_up_midway(client, i, gate, rng) for i in range(CLIENTS)))


def test_two_hundred_clients_hanging_up_free_every_block(live_gateway):
    asyncio.run(storm_warmup(live_gateway.url))
    gc.collect()
    before = rss_bytes()
    results = asyncio.run(storm(live_gateway.url))
    assert results == ["closed"] * CLIENTS
    deadline = time.monotonic() + 120
    while (state := engine_state(live_gateway))["running"] or state["waiting"]:
        assert time.monotonic() < deadline, f"the engine still holds abandoned requests: {state}"
        time.sleep(0.2)
    if "kv_blocks_in_use" in state:
        assert state["kv_blocks_in_use"] == 0, state
    gc.collect()
    assert rss_bytes() - before < SLACK_BYTES, f"memory grew {(rss_bytes() - before) / 2**20:.0f} MiB"
    ok = httpx.post(live_gateway.url + "/v1/chat/completions", timeout=120, json={
        "model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "still alive?"}]})
    assert ok.status_code == 200


async def storm_warmup(url: str) -> None:
    """A few full answers first, so lazily built buffers exist before memory is measured."""
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        for i in range(3):
            await client.post("/v1/chat/completions", json={
                "model": MODEL, "max_tokens": 16, "messages": [{"role": "user", "content": f"warm up {i}"}]})
